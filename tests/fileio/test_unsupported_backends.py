"""PetrelBackend and MemcachedBackend import and register as in MMEngine, and say on first use
that they are not supported and what to use instead."""

from __future__ import annotations

import pytest

from treadle import fileio
from treadle.fileio.backends import backends, prefix_to_backends

PETREL = (
    "PetrelBackend is not supported by treadle.fileio: it needs SenseTime's petrel_client SDK, "
    "which is not publicly available. Petrel buckets speak the S3 protocol: use s3:// paths "
    "(S3Backend)"
)
MEMCACHED = (
    "MemcachedBackend is not supported by treadle.fileio: it needs the in-house memcached "
    "client 'mc' (pyMemcached), which is not publicly available. For fast reads of many small "
    "files pack them into an LMDB database and use LmdbBackend"
)


def test_names_are_exported_and_registered_as_in_mmengine():
    assert backends["petrel"] is fileio.PetrelBackend
    assert backends["memcached"] is fileio.MemcachedBackend
    assert prefix_to_backends["petrel"] is fileio.PetrelBackend
    # s3:// stays with the working S3Backend (MMEngine sends it to Petrel).
    assert prefix_to_backends["s3"] is fileio.S3Backend
    assert issubclass(fileio.PetrelBackend, fileio.BaseStorageBackend)


@pytest.mark.parametrize(
    "make",
    [
        lambda: fileio.PetrelBackend(),
        lambda: fileio.PetrelBackend(path_mapping={"a": "b"}, enable_mc=False, conf_path="x"),
        lambda: fileio.get_file_backend(backend_args={"backend": "petrel"}),
        lambda: fileio.get_file_backend("petrel://bucket/key"),
        lambda: fileio.get("petrel://bucket/key"),
        lambda: fileio.get("cluster:petrel://bucket/key"),
    ],
    ids=["plain", "mmengine-arguments", "by-name", "by-prefix", "get", "cluster-prefix"],
)
def test_petrel_says_what_to_use_instead(make):
    with pytest.raises(NotImplementedError) as info:
        make()
    assert str(info.value).startswith(PETREL)
    assert "register_backend" in str(info.value)
    # MMEngine raises ImportError without petrel_client: code that falls back on it still does.
    assert isinstance(info.value, ImportError)
    assert isinstance(info.value, fileio.UnsupportedBackendError)


@pytest.mark.parametrize(
    "make",
    [
        lambda: fileio.MemcachedBackend("servers.conf", "client.conf"),
        lambda: fileio.MemcachedBackend("servers.conf", "client.conf", sys_path="/opt/mc"),
        lambda: fileio.get(
            "a.jpg",
            backend_args={"backend": "memcached", "server_list_cfg": "s", "client_cfg": "c"},
        ),
    ],
    ids=["positional", "sys_path", "get"],
)
def test_memcached_says_what_to_use_instead(make):
    with pytest.raises(ImportError) as info:  # MMEngine's error without the 'mc' client
        make()
    assert str(info.value).startswith(MEMCACHED)
    assert isinstance(info.value, NotImplementedError)


def test_memcached_keeps_mmengine_signature():
    with pytest.raises(TypeError, match="client_cfg"):
        fileio.MemcachedBackend("servers.conf")
