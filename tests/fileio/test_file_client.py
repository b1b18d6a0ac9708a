"""FileClient: MMEngine's deprecated client, over treadle.fileio's backends."""

import pytest

from treadle.fileio import (
    BaseStorageBackend,
    FileClient,
    HardDiskBackend,
    LocalBackend,
    S3Backend,
)

pytestmark = [
    pytest.mark.filterwarnings("ignore:FileClient is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:HardDiskBackend is the older name:DeprecationWarning"),
]


@pytest.fixture(autouse=True)
def fresh_clients(monkeypatch):
    monkeypatch.setattr(FileClient, "_instances", {})
    monkeypatch.setattr(FileClient, "_backends", dict(FileClient._backends))
    monkeypatch.setattr(FileClient, "_prefix_to_backends", dict(FileClient._prefix_to_backends))


def test_warns_that_it_is_deprecated():
    with pytest.warns(DeprecationWarning, match="FileClient is deprecated.*treadle.fileio"):
        FileClient()


def test_local_round_trip(tmp_path):
    client = FileClient()
    # MMEngine's FileClient makes a HardDiskBackend, the deprecated subclass of LocalBackend.
    assert isinstance(client.client, HardDiskBackend) and client.name == "HardDiskBackend"
    assert isinstance(client.client, LocalBackend)
    path = tmp_path / "sub" / "a.txt"
    client.put_text("hello", path)
    client.put(b"bytes", tmp_path / "b.bin")
    assert client.get_text(path) == "hello" and client.get(tmp_path / "b.bin") == b"bytes"
    assert client.exists(path) and client.isfile(path) and client.isdir(tmp_path / "sub")
    assert client.join_path(str(tmp_path), "sub", "a.txt") == str(path)
    with client.get_local_path(path) as local:
        assert local == str(path)
    assert sorted(client.list_dir_or_file(tmp_path, recursive=True)) == [
        "b.bin",
        "sub",
        "sub/a.txt",
    ]
    assert list(client.list_dir_or_file(tmp_path, list_dir=False, suffix=".bin")) == ["b.bin"]
    client.remove(path)
    assert not client.exists(path)


def test_clients_are_cached_by_arguments():
    assert FileClient() is FileClient(backend="disk")  # the same key, 'disk:None'
    pytest.importorskip("boto3")  # S3Backend's client: the s3 extra of treadle-fileio
    assert FileClient(prefix="s3") is FileClient(prefix="s3")
    assert FileClient(prefix="s3") is not FileClient(prefix="s3", region_name="eu-west-1")
    assert isinstance(FileClient(prefix="s3").client, S3Backend)


def test_parse_uri_prefix_and_infer_client(tmp_path):
    assert FileClient.parse_uri_prefix("/a/b") is None
    assert FileClient.parse_uri_prefix("s3://bucket/key") == "s3"
    assert FileClient.parse_uri_prefix("cluster:s3://bucket/key") == "s3"
    assert FileClient.infer_client(uri=str(tmp_path)).name == "HardDiskBackend"
    assert FileClient.infer_client({"backend": "disk"}).name == "HardDiskBackend"
    assert FileClient.infer_client(uri="https://example.com/x").name == "HTTPBackend"


def test_unknown_backend_or_prefix_is_named():
    with pytest.raises(ValueError, match=r"backend 'nope' is not supported\. Currently supported"):
        FileClient(backend="nope")
    with pytest.raises(ValueError, match="prefix 'gs' is not supported"):
        FileClient(prefix="gs")
    with pytest.raises(ValueError, match="needs file_client_args or uri"):
        FileClient.infer_client()
    with pytest.raises(TypeError, match="uri must be a str or a path"):
        FileClient.parse_uri_prefix(3)
    # MMEngine asserts there: the error is an AssertionError too.
    with pytest.raises(AssertionError, match=r"uri must be a str or a path, got None"):
        FileClient.parse_uri_prefix(None)


def test_register_backend_with_prefix_and_force():
    class EchoBackend(BaseStorageBackend):
        def get(self, filepath):
            return str(filepath).encode()

        def get_text(self, filepath, encoding="utf-8"):
            return str(filepath)

    FileClient.register_backend("echo", EchoBackend, prefixes="echo")
    assert FileClient(prefix="echo").get("echo://x") == b"echo://x"
    with pytest.raises(KeyError, match=r"echo is already registered.*force=True"):
        FileClient.register_backend("echo", EchoBackend)
    with pytest.raises(TypeError, match="subclass of BaseStorageBackend"):
        FileClient.register_backend("bad", int)

    @FileClient.register_backend("echo", force=True)
    class LoudEcho(EchoBackend):
        def get_text(self, filepath, encoding="utf-8"):
            return str(filepath).upper()

    assert FileClient(backend="echo").get_text("a") == "A"
