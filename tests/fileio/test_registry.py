"""Which backend serves a path: prefixes, names, register_backend and the instance cache."""

from __future__ import annotations

import pytest

from treadle import fileio
from treadle.fileio import (
    BaseStorageBackend,
    FsspecBackend,
    HardDiskBackend,
    LocalBackend,
    get_file_backend,
    register_backend,
)


class EchoBackend(BaseStorageBackend):
    """Returns the path it is asked for, and remembers its arguments."""

    def __init__(self, **kwargs) -> None:
        self.kwargs = kwargs

    def get(self, filepath):
        return str(filepath).encode()

    def get_text(self, filepath, encoding="utf-8"):
        return str(filepath)


def test_prefixes_pick_backends(tmp_path):
    assert type(get_file_backend(tmp_path)) is LocalBackend
    assert type(get_file_backend("relative/path.txt")) is LocalBackend
    assert type(get_file_backend("memory://x")) is FsspecBackend
    assert type(get_file_backend(f"file://{tmp_path}")) is FsspecBackend


def test_any_protocol_fsspec_knows_goes_to_fsspec(tmp_path):
    # 'local' is not registered, but fsspec has an implementation for it.
    url = f"local://{tmp_path}/a/b.txt"
    assert type(get_file_backend(url)) is FsspecBackend
    fileio.put(b"via fsspec", url)
    assert (tmp_path / "a" / "b.txt").read_bytes() == b"via fsspec"
    assert fileio.get(url) == b"via fsspec"
    assert type(get_file_backend("simplecache::memory://x")) is FsspecBackend


def test_file_urls_write_atomically_through_fsspec(tmp_path):
    fileio.put_text("text", f"file://{tmp_path}/d/t.txt")
    assert (tmp_path / "d" / "t.txt").read_text() == "text"
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["t.txt"]


def test_unknown_prefix_lists_the_registered_ones():
    with pytest.raises(
        ValueError, match=r"prefix 'nope' of 'nope://x'.*'' \(LocalBackend\).*'s3' \(S3Backend\)"
    ):
        fileio.get("nope://x")


def test_backend_args_name_a_backend(tmp_path):
    (tmp_path / "f").write_bytes(b"disk")
    assert fileio.get(tmp_path / "f", backend_args={"backend": "local"}) == b"disk"
    assert fileio.get(tmp_path / "f", backend_args={"backend": "disk"}) == b"disk"
    with pytest.raises(
        ValueError, match=r"'nope', which is not registered: registered backends are .*local"
    ):
        fileio.get(tmp_path / "f", backend_args={"backend": "nope"})
    with pytest.raises(ValueError, match="uri should not be None when backend_args names no"):
        get_file_backend()
    with pytest.raises(ValueError, match="uri should not be None"):
        get_file_backend(None, backend_args={})


def test_hard_disk_backend_is_a_deprecated_local_backend(tmp_path):
    # MMEngine's FileClient('disk') makes one, named after its class; it warns.
    with pytest.warns(DeprecationWarning, match="HardDiskBackend is the older name of Local"):
        backend = HardDiskBackend()
    assert isinstance(backend, LocalBackend) and backend.name == "HardDiskBackend"
    backend.put_text("disk", tmp_path / "a.txt")
    assert backend.get_text(tmp_path / "a.txt") == "disk"
    # Paths and names still pick LocalBackend itself.
    assert type(get_file_backend(tmp_path)) is LocalBackend
    assert type(get_file_backend(backend_args={"backend": "disk"})) is LocalBackend


def test_register_backend_as_function_and_decorator():
    register_backend("echo", EchoBackend, prefixes=["echo", "echo2"])
    assert fileio.get("echo://a") == b"echo://a"
    assert fileio.get_text("cluster:echo2://b") == "cluster:echo2://b"

    @register_backend("echo3", prefixes="echo3")
    class Echo3(EchoBackend):
        pass

    assert type(get_file_backend("echo3://x")) is Echo3
    with pytest.raises(NotImplementedError, match="Echo3 does not support put"):
        fileio.put(b"x", "echo3://x")


def test_register_backend_refuses_duplicates_unless_forced():
    register_backend("echo", EchoBackend, prefixes="echo")
    with pytest.raises(ValueError, match=r"echo is already registered .*force=True"):
        register_backend("echo", EchoBackend)
    with pytest.raises(
        ValueError, match=r"the prefix s3 is already registered \(to S3Backend\).*force=True"
    ):
        register_backend("other", EchoBackend, prefixes="s3")
    register_backend("mys3", EchoBackend, prefixes="s3", force=True)
    assert fileio.get("s3://bucket/key") == b"s3://bucket/key"


def test_register_backend_checks_its_arguments():
    with pytest.raises(TypeError, match="backend dict is not a subclass of BaseStorageBackend"):
        register_backend("bad", dict)
    with pytest.raises(TypeError, match=r"backend should be a class \(a subclass of Base"):
        register_backend("bad", lambda: None)
    with pytest.raises(TypeError, match="the backend name should be a string, got int"):
        register_backend(1, EchoBackend)
    with pytest.raises(TypeError, match="prefixes must be a str or a list of str"):
        register_backend("bad", EchoBackend, prefixes=1)
    # MMEngine asserts on prefixes: the error is an AssertionError too.
    with pytest.raises(AssertionError, match="prefixes must be a str or a list of str, got 1"):
        register_backend("bad", EchoBackend, prefixes=1)


def test_instances_are_cached_by_class_and_arguments():
    register_backend("echo", EchoBackend, prefixes="echo")
    first = get_file_backend(
        "echo://a", backend_args={"a": [1, 2], "b": {"x": 1}}, enable_singleton=True
    )
    same = get_file_backend(
        "echo://b", backend_args={"b": {"x": 1}, "a": [1, 2]}, enable_singleton=True
    )
    other = get_file_backend("echo://a", backend_args={"a": [1, 3]}, enable_singleton=True)
    fresh = get_file_backend("echo://a", backend_args={"a": [1, 2], "b": {"x": 1}})
    assert first is same
    assert other is not first and other.kwargs == {"a": [1, 3]}
    assert fresh is not first
    assert first.kwargs == {"a": [1, 2], "b": {"x": 1}}
