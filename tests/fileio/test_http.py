"""http(s):// paths through fsspec's HTTPFileSystem, from a local HTTP server (needs the
``http`` extra: aiohttp)."""

from __future__ import annotations

import functools
import http.server
import threading

import pytest

from treadle import fileio


@pytest.fixture
def http_root(tmp_path):
    pytest.importorskip("aiohttp")
    (tmp_path / "labels.json").write_text('{"cat": 1}')
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_get_and_load_over_http(http_root):
    assert fileio.get(f"{http_root}/labels.json") == b'{"cat": 1}'
    assert fileio.load(f"{http_root}/labels.json") == {"cat": 1}
    assert fileio.exists(f"{http_root}/labels.json")
    with pytest.raises(FileNotFoundError, match="FsspecBackend"):
        fileio.get(f"{http_root}/missing.json")
