"""A paced background write goes around the page cache (treadle.runner.checkpoint.direct_file:
O_DIRECT through an aligned staging buffer); where the file system refuses O_DIRECT, it sends
each piece to the disk as it is written and drops the pieces already there from the page cache
(treadle.runner.checkpoint.disk_writeback). Either way neither the kernel's later writeback of
the whole file nor ext4's flush at close lands on a training step as one burst, and the file
is the same; where the system cannot do either, the file is written as before."""

from __future__ import annotations

import ctypes
import errno
import io
import mmap
import os
import sys
import threading

import pytest
import torch

from treadle.runner.checkpoint.direct_file import DirectFile
from treadle.runner.checkpoint.disk_writeback import DiskWriteback, open_untruncated
from treadle.runner.checkpoint.torch_format import load_torch, save_torch
from treadle.runner.checkpoint.write_pacing import PIECE_BYTES, PacedFile, WritePace, pacing

MIB = 1 << 20
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux calls")


def _resident_bytes(path) -> int:
    """How much of the file is in the page cache (mincore over a private mapping of it)."""
    size = os.path.getsize(path)
    page = mmap.PAGESIZE
    with open(path, "rb") as file:
        mapping = mmap.mmap(file.fileno(), size, access=mmap.ACCESS_COPY)
    try:
        anchor = ctypes.c_char.from_buffer(mapping)
        pages = (size + page - 1) // page
        vector = (ctypes.c_ubyte * pages)()
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
        assert libc.mincore(ctypes.addressof(anchor), size, vector) == 0
        del anchor
        return sum(byte & 1 for byte in vector) * page
    finally:
        mapping.close()


@pytest.fixture
def droppable_dir(tmp_path):
    """A directory whose file system writes to a disk and can drop clean pages (not tmpfs)."""
    probe = tmp_path / "probe.bin"
    with open(probe, "wb") as file:
        file.write(os.urandom(MIB))
        file.flush()
        os.fsync(file.fileno())
        os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    if _resident_bytes(probe) > MIB // 2:
        pytest.skip("this file system keeps its pages in memory (tmpfs?)")
    return tmp_path


def _paced_write(path, data: bytes, pace: WritePace) -> None:
    with open_untruncated(str(path)) as file:
        paced = PacedFile(file, pace)
        paced.write(data)
        paced.finish()


def _running_pace() -> WritePace:
    pace = WritePace(share=1 << 40, step_seconds=10.0)
    pace.tick()  # one step allows all of it; the pace is not released
    return pace


@linux_only
def test_a_paced_write_leaves_little_of_the_file_in_the_page_cache(droppable_dir):
    data = os.urandom(4 * MIB) * 16  # 64 MiB
    path = droppable_dir / "paced.bin"
    _paced_write(path, data, _running_pace())
    # About two pieces stay (the last one and the one whose disk write was not waited for).
    assert _resident_bytes(path) <= 3 * PIECE_BYTES
    assert path.read_bytes() == data  # (which reads it into the page cache)


@linux_only
def test_without_it_the_whole_file_stays_in_the_page_cache(droppable_dir):
    # The control: the measure above is not vacuous on this machine.
    data = os.urandom(4 * MIB) * 16
    path = droppable_dir / "plain.bin"
    with open(path, "wb") as file:
        file.write(data)
    assert _resident_bytes(path) > 48 * MIB


@linux_only
def test_once_released_the_write_does_not_wait_for_the_disk(droppable_dir):
    data = os.urandom(4 * MIB) * 8
    path = droppable_dir / "released.bin"
    pace = WritePace(share=1 << 40, step_seconds=10.0)
    pace.release()  # the training thread waits for this write: memory speed
    _paced_write(path, data, pace)
    assert _resident_bytes(path) > 24 * MIB  # nothing was waited for nor dropped
    assert path.read_bytes() == data


def test_a_file_without_a_descriptor_is_written_as_before():
    buffer = io.BytesIO()
    assert DiskWriteback.of(buffer, PIECE_BYTES) is None
    data = os.urandom(MIB) * 9
    paced = PacedFile(buffer, _running_pace())
    assert paced.write(data) == len(data)
    paced.finish()
    assert buffer.getvalue() == data


@linux_only
def test_a_file_the_system_cannot_write_back_is_written_as_before():
    # A pipe refuses sync_file_range (ESPIPE): the writeback steps aside, the bytes go on.
    reader, writer = os.pipe()
    received = bytearray()

    def drain() -> None:
        with open(reader, "rb") as source:
            while chunk := source.read(MIB):
                received.extend(chunk)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    data = os.urandom(MIB) * 12
    with open(writer, "wb") as file:
        paced = PacedFile(file, _running_pace())
        assert paced.write(data) == len(data)
        paced.finish()
    thread.join(10)
    assert bytes(received) == data


def test_open_untruncated_replaces_what_a_file_held(tmp_path):
    path = tmp_path / "old.bin"
    path.write_bytes(b"x" * 1000)
    with open_untruncated(str(path)) as file:
        file.write(b"new")
    assert path.read_bytes() == b"new"


def test_open_untruncated_creates_a_missing_file_as_open_would(tmp_path):
    path = tmp_path / "created.bin"
    with open_untruncated(str(path)) as file:
        file.write(b"data")
    reference = tmp_path / "reference.bin"
    reference.write_bytes(b"data")
    assert path.read_bytes() == b"data"
    assert path.stat().st_mode == reference.stat().st_mode


def test_a_paced_torch_save_over_an_older_file_loads_as_saved(tmp_path):
    state = {"weight": torch.randn(1024, 1024), "step": 7}  # 4 MiB: more than one piece
    path = tmp_path / "iter_7.pth"
    path.write_bytes(os.urandom(9 * MIB))  # longer than the new file: no tail may remain
    with pacing(_running_pace()):
        save_torch(state, str(path))
    loaded = load_torch(str(path), "cpu", True, str(path))
    assert loaded["step"] == 7
    assert torch.equal(loaded["weight"], state["weight"])


# ---------------------------------------------------------------- direct writes (O_DIRECT)

direct_io = pytest.mark.skipif(not hasattr(os, "O_DIRECT"), reason="O_DIRECT is Linux's")


def _direct_or_skip(path) -> DirectFile:
    direct = DirectFile.open(str(path))
    if direct is None:
        pytest.skip("this file system refuses O_DIRECT")
    return direct


@direct_io
def test_a_direct_file_holds_exactly_what_was_written(tmp_path):
    path = tmp_path / "direct.bin"
    pieces = [os.urandom(size) for size in (3, 4 * MIB - 1, 5 * MIB + 7, 12345, 1)]
    with _direct_or_skip(path) as file:
        for piece in pieces:
            assert file.write(piece) == len(piece)
    assert path.read_bytes() == b"".join(pieces)  # the padded tail was cut back


@direct_io
def test_a_direct_file_takes_nothing_from_the_page_cache(droppable_dir):
    data = os.urandom(4 * MIB) * 16
    path = droppable_dir / "direct.bin"
    with _direct_or_skip(path) as file:
        file.write(data)
    assert _resident_bytes(path) <= 8 * 4096
    assert path.read_bytes() == data


@direct_io
def test_a_direct_file_replaces_what_a_file_held(tmp_path):
    path = tmp_path / "old.bin"
    path.write_bytes(os.urandom(9 * MIB))
    with _direct_or_skip(path) as file:
        file.write(b"short")
    assert path.read_bytes() == b"short"


@direct_io
def test_an_abandoned_direct_file_writes_nothing_more(tmp_path):
    path = tmp_path / "abandoned.bin"
    direct = _direct_or_skip(path)
    with pytest.raises(RuntimeError, match="pickling failed"), direct as file:
        file.write(b"staged, never written")
        raise RuntimeError("pickling failed")
    assert path.read_bytes() == b""


@direct_io
def test_a_file_system_that_refuses_o_direct_gets_the_page_cache_path(tmp_path, monkeypatch):
    real_open = os.open

    def refusing_open(path, flags, *args):
        if flags & os.O_DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", refusing_open)
    assert DirectFile.open(str(tmp_path / "refused.bin")) is None
    # A paced save still writes the file, through the page cache.
    state = {"weight": torch.randn(512, 1024)}
    path = tmp_path / "iter_1.pth"
    with pacing(_running_pace()):
        save_torch(state, str(path))
    assert torch.equal(load_torch(str(path), "cpu", True, str(path))["weight"], state["weight"])


@direct_io
def test_a_refused_direct_write_goes_on_through_the_page_cache(tmp_path, monkeypatch):
    import fcntl

    real_write = os.write
    refused = []

    def refusing_write(descriptor, data):
        if not refused and fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_DIRECT:
            refused.append(descriptor)
            raise OSError(errno.EINVAL, "Invalid argument")
        return real_write(descriptor, data)

    path = tmp_path / "fallback.bin"
    data = os.urandom(MIB) * 5
    with _direct_or_skip(path) as file:
        monkeypatch.setattr(os, "write", refusing_write)
        file.write(data)
    monkeypatch.undo()
    assert refused  # the first write was refused, the rest went through the page cache
    assert path.read_bytes() == data
