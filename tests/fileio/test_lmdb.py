"""LmdbBackend: values of a real LMDB database by key (the ``lmdb`` extra)."""

from __future__ import annotations

import pickle

import pytest

from treadle import fileio

lmdb = pytest.importorskip("lmdb")


@pytest.fixture
def database(tmp_path):
    path = tmp_path / "train.lmdb"
    env = lmdb.open(str(path), map_size=1 << 20)
    with env.begin(write=True) as txn:
        txn.put(b"images/0001.jpg", b"\xff\xd8jpeg")
        txn.put(b"labels.txt", "cat\ndög\n".encode())
    env.close()
    return path


def test_get_and_get_text(database):
    backend = fileio.LmdbBackend(database)
    assert backend.get("images/0001.jpg") == b"\xff\xd8jpeg"
    assert backend.get_text("labels.txt") == "cat\ndög\n"
    assert backend.exists("labels.txt") and backend.isfile("labels.txt")
    assert not backend.exists("labels.json")
    backend.close()
    assert backend.get("labels.txt")  # reopened on the next read


def test_built_by_name_as_mmengine_configs_name_it(database):
    backend = fileio.get_file_backend(backend_args={"backend": "lmdb", "db_path": str(database)})
    assert type(backend) is fileio.LmdbBackend
    assert fileio.get("images/0001.jpg", backend_args={"backend": "lmdb", "db_path": str(database)})


def test_open_options_reach_lmdb(database):
    backend = fileio.LmdbBackend(database, readonly=True, lock=False, max_readers=4)
    assert backend.get("labels.txt")
    assert backend._environment().info()["max_readers"] == 4


def test_pickled_backend_opens_its_own_environment(database):
    backend = fileio.LmdbBackend(database)
    backend.get("labels.txt")  # opened
    copy = pickle.loads(pickle.dumps(backend))
    assert copy._env is None
    # lmdb allows one environment per database and process; a worker process has only its own.
    backend.close()
    assert copy.get("images/0001.jpg") == b"\xff\xd8jpeg"


def test_missing_key_names_the_key_and_the_database(database):
    backend = fileio.LmdbBackend(database)
    with pytest.raises(FileNotFoundError) as info:
        backend.get("images/0002.jpg")
    assert info.value.filename == "images/0002.jpg"
    assert str(info.value) == (
        f"[Errno 2] No such key in the LMDB database {str(database)!r} (LmdbBackend): "
        "'images/0002.jpg'"
    )


def test_missing_database_is_reported_on_first_read(tmp_path):
    backend = fileio.LmdbBackend(tmp_path / "nope.lmdb")  # lazily opened: no error yet
    with pytest.raises(FileNotFoundError) as info:
        backend.get("a")
    assert str(info.value) == (
        f"[Errno 2] No LMDB database (LmdbBackend, db_path): {str(tmp_path / 'nope.lmdb')!r}"
    )


def test_a_file_that_is_no_database_is_a_storage_error(tmp_path):
    bogus = tmp_path / "bogus"
    bogus.mkdir()
    (bogus / "data.mdb").write_bytes(b"not an lmdb file" * 100)
    with pytest.raises(
        fileio.StorageError, match=r"LmdbBackend cannot open the LMDB database .*bogus"
    ):
        fileio.LmdbBackend(bogus).get("a")


def test_db_path_type_is_checked():
    with pytest.raises(
        TypeError, match=r"LmdbBackend's db_path must be a str or os\.PathLike, got int"
    ):
        fileio.LmdbBackend(3)


def test_writing_is_not_supported(database):
    with pytest.raises(NotImplementedError, match="LmdbBackend does not support put"):
        fileio.LmdbBackend(database).put(b"x", "k")


def test_missing_lmdb_names_the_extra(database, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "lmdb", None)  # import lmdb raises ImportError
    with pytest.raises(ImportError, match=r"LmdbBackend needs 'lmdb'.*treadle-fileio\[lmdb\]"):
        fileio.LmdbBackend(database).get("labels.txt")


def test_text_reads_can_be_turned_off_as_treadle_compat_does(database, monkeypatch):
    # MMEngine's LmdbBackend refuses get_text; treadle.compat's install() sets text_reads=False.
    backend = fileio.LmdbBackend(database)
    monkeypatch.setattr(fileio.LmdbBackend, "text_reads", False)
    with pytest.raises(NotImplementedError, match=r"LmdbBackend.get_text is off \(LmdbBackend"):
        backend.get_text("labels.txt")
    assert backend.get("labels.txt") == "cat\ndög\n".encode()  # bytes are still read
    monkeypatch.setattr(fileio.LmdbBackend, "text_reads", True)
    assert backend.get_text("labels.txt") == "cat\ndög\n"
