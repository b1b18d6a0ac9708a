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
    with pytest.raises(FileNotFoundError, match="HTTPBackend"):
        fileio.get(f"{http_root}/missing.json")


def test_http_paths_are_served_by_http_backend(http_root):
    backend = fileio.get_file_backend(f"{http_root}/labels.json")
    assert type(backend) is fileio.HTTPBackend
    assert type(fileio.get_file_backend("https://example.com/a")) is fileio.HTTPBackend
    named = fileio.get_file_backend(backend_args={"backend": "http"})
    assert type(named) is fileio.HTTPBackend
    assert named.get_text(f"{http_root}/labels.json") == '{"cat": 1}'
    assert named.isfile(f"{http_root}/labels.json")
    assert not named.exists(f"{http_root}/missing.json")


def test_http_get_local_path_is_a_temporary_copy(http_root):
    backend = fileio.HTTPBackend()
    with backend.get_local_path(f"{http_root}/labels.json") as path, open(path) as file:
        assert file.read() == '{"cat": 1}'
    import os

    assert not os.path.exists(path)
    with (
        pytest.raises(FileNotFoundError, match=r"HTTPBackend.*missing.json"),
        backend.get_local_path(f"{http_root}/missing.json"),
    ):
        pass


@pytest.mark.parametrize(
    ("call", "operation"),
    [
        (lambda b, url, local: b.put(b"x", url), "put"),
        (lambda b, url, local: b.put_text("x", url), "put_text"),
        (lambda b, url, local: b.remove(url), "remove"),
        (lambda b, url, local: b.rmtree(url), "rmtree"),
        (lambda b, url, local: b.copyfile(url, url + ".bak"), "copyfile to"),
        (lambda b, url, local: b.copytree(url, url + "2"), "copytree to"),
        (lambda b, url, local: b.copyfile_from_local(local, url), "copyfile_from_local to"),
        (lambda b, url, local: b.copytree_from_local(local, url), "copytree_from_local to"),
    ],
)
def test_http_is_read_only(http_root, tmp_path, call, operation):
    url = f"{http_root}/labels.json"
    with pytest.raises(NotImplementedError) as info:
        call(fileio.HTTPBackend(), url, str(tmp_path / "labels.json"))
    assert str(info.value).startswith(f"HTTPBackend cannot {operation} ")
    assert "http(s):// URLs are read-only in treadle.fileio" in str(info.value)
    assert (tmp_path / "labels.json").read_text() == '{"cat": 1}'  # the served file is intact


def test_http_write_through_the_functions_names_the_url(http_root):
    with pytest.raises(
        NotImplementedError, match=r"HTTPBackend cannot put 'http://127\.0\.0\.1:\d+/new'"
    ):
        fileio.put(b"x", f"{http_root}/new")
