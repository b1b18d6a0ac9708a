"""Writes are atomic: a reader sees the old content or the new, never a part, and a failed
write leaves the old file as it was."""

from __future__ import annotations

import os
import stat
import threading

import pytest

from treadle import fileio
from treadle.fileio import atomic_temporary_path, atomic_write


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "model.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="disk full"), atomic_temporary_path(target) as temporary:
        with open(temporary, "wb") as file:
            file.write(b"half of the new")
        raise RuntimeError("disk full")
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["model.bin"]


def test_readers_never_see_half_written_files(tmp_path):
    target = tmp_path / "shared.bin"
    versions = [bytes([i]) * (1 << 20) for i in range(2)]
    fileio.put(versions[0], target)
    done = threading.Event()
    seen = set()

    def read() -> None:
        while not done.is_set():
            seen.add(fileio.get(target))

    reader = threading.Thread(target=read)
    reader.start()
    for index in range(40):
        fileio.put(versions[index % 2], target)
    done.set()
    reader.join()
    assert seen <= set(versions)
    assert os.listdir(tmp_path) == ["shared.bin"]


def test_permissions_are_kept_and_symlinks_written_through(tmp_path):
    target = tmp_path / "script.sh"
    target.write_text("old")
    target.chmod(0o750)
    link = tmp_path / "link.sh"
    link.symlink_to(target)
    fileio.put_text("new", link)
    assert link.is_symlink()
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750


def test_new_files_get_the_usual_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        atomic_write(tmp_path / "new.txt", b"x")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o644


def test_fsync_is_opt_in(tmp_path):
    backend = fileio.LocalBackend(fsync=True)
    backend.put(b"durable", str(tmp_path / "d" / "durable.bin"))
    assert (tmp_path / "d" / "durable.bin").read_bytes() == b"durable"


def test_local_copies_are_atomic_too(tmp_path):
    (tmp_path / "src.bin").write_bytes(b"new")
    (tmp_path / "dst.bin").write_bytes(b"old")
    fileio.copyfile(tmp_path / "src.bin", tmp_path / "dst.bin")
    assert (tmp_path / "dst.bin").read_bytes() == b"new"
    assert sorted(os.listdir(tmp_path)) == ["dst.bin", "src.bin"]
