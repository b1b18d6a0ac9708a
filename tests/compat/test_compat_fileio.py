"""Under treadle.compat, mmengine.fileio behaves as MMEngine 0.10.7's where plain treadle.fileio
does more: LmdbBackend reads bytes only (get_text raises NotImplementedError), and FileClient
makes a HardDiskBackend."""

import pytest

lmdb = pytest.importorskip("lmdb")


@pytest.fixture
def database(tmp_path):
    path = tmp_path / "demo.lmdb"
    env = lmdb.open(str(path), map_size=1 << 20)
    with env.begin(write=True) as txn:
        txn.put(b"labels.txt", b"cat\n")
    env.close()
    return path


def test_lmdb_get_text_is_refused_while_installed(compat, database):
    from mmengine.fileio import LmdbBackend

    backend = LmdbBackend(database)
    with pytest.raises(NotImplementedError, match="MMEngine's LmdbBackend does not read text"):
        backend.get_text("labels.txt")
    assert backend.get("labels.txt") == b"cat\n"


def test_lmdb_get_text_decodes_again_after_uninstall(compat, database):
    from treadle.fileio import LmdbBackend

    compat.uninstall()
    assert LmdbBackend(database).get_text("labels.txt") == "cat\n"
    compat.install()


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_file_client_disk_is_a_hard_disk_backend(compat):
    from mmengine.fileio import FileClient, HardDiskBackend, LocalBackend

    client = FileClient("disk")
    assert client.name == "HardDiskBackend"
    assert isinstance(client.client, HardDiskBackend) and isinstance(client.client, LocalBackend)
