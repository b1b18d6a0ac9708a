"""HTTPBackend, LmdbBackend, PetrelBackend and MemcachedBackend next to MMEngine 0.10.7's.

Both libraries read the same bytes from the same local HTTP server and LMDB database; where
treadle deliberately differs (a missing key, the unsupported clients) the difference is asserted.
Skipped without MMEngine: ``hatch run mmengine:parity`` (with the ``lmdb`` and ``aiohttp``
packages in that environment).
"""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

mm_fileio = pytest.importorskip("mmengine.fileio")

from treadle import fileio as tr_fileio  # noqa: E402


@pytest.fixture
def http_root(tmp_path):
    pytest.importorskip("aiohttp")
    (tmp_path / "labels.txt").write_text("cat\ndog\n")
    (tmp_path / "image.bin").write_bytes(bytes(range(256)))
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def database(tmp_path):
    lmdb = pytest.importorskip("lmdb")
    path = tmp_path / "data.lmdb"
    env = lmdb.open(str(path), map_size=1 << 20)
    with env.begin(write=True) as txn:
        txn.put(b"images/1.jpg", b"\xff\xd8one")
    env.close()
    return str(path)


def test_http_reads_the_same(http_root):
    mm, tr = mm_fileio.HTTPBackend(), tr_fileio.HTTPBackend()
    for name in ("labels.txt", "image.bin"):
        url = f"{http_root}/{name}"
        assert tr.get(url) == mm.get(url)
        with mm.get_local_path(url) as mm_path, tr.get_local_path(url) as tr_path:
            assert Path(tr_path).read_bytes() == Path(mm_path).read_bytes()
    assert tr.get_text(f"{http_root}/labels.txt") == mm.get_text(f"{http_root}/labels.txt")
    assert tr_fileio.get(f"{http_root}/labels.txt") == mm_fileio.get(f"{http_root}/labels.txt")


def test_http_is_chosen_by_the_same_prefixes_and_name():
    for prefix in ("http", "https"):
        assert type(mm_fileio.get_file_backend(f"{prefix}://h/a")).__name__ == "HTTPBackend"
        assert type(tr_fileio.get_file_backend(f"{prefix}://h/a")).__name__ == "HTTPBackend"
    assert type(tr_fileio.get_file_backend(backend_args={"backend": "http"})).__name__ == (
        type(mm_fileio.get_file_backend(backend_args={"backend": "http"})).__name__
    )


def test_deviation_http_missing_file(http_root):
    # MMEngine lets urllib's HTTPError (404) out; treadle raises FileNotFoundError with the URL.
    url = f"{http_root}/missing.txt"
    with pytest.raises(Exception) as mm_error:
        mm_fileio.HTTPBackend().get(url)
    assert "404" in str(mm_error.value)
    with pytest.raises(FileNotFoundError, match="HTTPBackend"):
        tr_fileio.HTTPBackend().get(url)


def test_lmdb_reads_the_same(database):
    mm = mm_fileio.LmdbBackend(database)
    value = mm.get("images/1.jpg")
    mm._client.close()  # lmdb opens a database once per process
    tr = tr_fileio.LmdbBackend(database)
    assert tr.get("images/1.jpg") == value == b"\xff\xd8one"
    tr.close()


def test_deviation_lmdb_missing_key_and_get_text(database):
    mm = mm_fileio.LmdbBackend(database)
    assert mm.get("nope") is None  # fails later, far from the key
    with pytest.raises(NotImplementedError):
        mm.get_text("images/1.jpg")
    mm._client.close()
    tr = tr_fileio.LmdbBackend(database)
    with pytest.raises(FileNotFoundError, match="No such key"):
        tr.get("nope")
    assert tr.get_text("images/1.jpg", encoding="latin-1") == "\xff\xd8one"
    tr.close()


def test_deviation_petrel_and_memcached_clients():
    # MMEngine raises ImportError for the missing client; treadle says it is not supported and
    # what to use instead.
    with pytest.raises(ImportError):
        mm_fileio.PetrelBackend()
    with pytest.raises(NotImplementedError, match="use s3:// paths"):
        tr_fileio.PetrelBackend()
    with pytest.raises(ImportError):
        mm_fileio.MemcachedBackend("s.conf", "c.conf")
    with pytest.raises(NotImplementedError, match="LmdbBackend"):
        tr_fileio.MemcachedBackend("s.conf", "c.conf")
