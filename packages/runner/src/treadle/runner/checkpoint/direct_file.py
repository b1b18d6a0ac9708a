"""DirectFile: a new file written around the page cache (``O_DIRECT``), through one aligned
staging buffer.

A background checkpoint write that goes through the page cache takes a checkpoint's size of
memory from the kernel and gives it back later: when the kernel writes the pages to the disk
and frees them, or when :class:`~.disk_writeback.DiskWriteback` drops them. On a 2-core
virtual machine either way made some training steps after a save 2-3x longer: the pages that
training allocates next were ones the system had just freed (and, under a hypervisor, handed
back to the host). Written with ``O_DIRECT`` the bytes go from a 4 MiB staging buffer, reused
for the whole file, straight to the disk: no page of the page cache is taken or freed.

``O_DIRECT`` wants buffers and lengths aligned to the disk's blocks: the staging buffer is a
page-aligned mapping, every write but the last is a whole buffer, and the last is padded to
4 KiB and cut back with ``ftruncate``. Where the system or the file system does not take
``O_DIRECT`` (not Linux, tmpfs, some FUSE mounts), :meth:`DirectFile.open` returns None; where
a write is refused for its alignment, the file goes on through the page cache.
"""

from __future__ import annotations

import errno
import mmap
import os
from types import TracebackType

from .disk_writeback import open_emptied

# The staging buffer: as large as the pieces of a paced write (.write_pacing.PIECE_BYTES).
STAGING_BYTES = 4 << 20
# The tail is padded to this: a multiple of every logical block size in use.
_ALIGNMENT = 4096


class DirectFile:
    """A new, empty file written with ``O_DIRECT`` (see the module's docstring).

    Example:
        >>> direct = DirectFile.open('/data/iter_100.pth.tmp')
        >>> if direct is not None:
        ...     with direct:
        ...         torch.save(state, direct)
    """

    def __init__(self, descriptor: int) -> None:
        self._descriptor = descriptor
        self._staging = mmap.mmap(-1, STAGING_BYTES)
        self._view = memoryview(self._staging)
        self._filled = 0  # bytes in the staging buffer
        self._length = 0  # bytes written by the caller
        self._closed = False

    @classmethod
    def open(cls, path: str) -> DirectFile | None:
        """Open ``path`` (created if missing, emptied if not) for direct writes; None where
        ``O_DIRECT`` is not available there."""
        flag = getattr(os, "O_DIRECT", 0)
        if not flag:
            return None
        try:
            descriptor = open_emptied(path, flag)
        except OSError as err:
            if err.errno == errno.EINVAL:  # the file system refuses O_DIRECT
                return None
            raise
        try:
            return cls(descriptor)
        except BaseException:
            os.close(descriptor)
            raise

    def write(self, data: bytes | bytearray | memoryview) -> int:
        view = memoryview(data).cast("B")
        start = 0
        while start < len(view):
            taken = min(STAGING_BYTES - self._filled, len(view) - start)
            self._view[self._filled : self._filled + taken] = view[start : start + taken]
            self._filled += taken
            start += taken
            if self._filled == STAGING_BYTES:
                self._write_out(STAGING_BYTES)
        self._length += len(view)
        return len(view)

    def flush(self) -> None:
        """Nothing to do: what is staged is written when the buffer is full or at ``close``."""

    def close(self) -> None:
        """Write what is staged (padded, then cut back to the file's length) and close."""
        if self._closed:
            return
        try:
            if self._filled:
                padded = -(-self._filled // _ALIGNMENT) * _ALIGNMENT
                self._view[self._filled : padded] = bytes(padded - self._filled)
                self._write_out(padded)
            os.ftruncate(self._descriptor, self._length)
        finally:
            self._release()

    def __enter__(self) -> DirectFile:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None:
            self.close()
        else:  # the file is abandoned (its caller removes it): nothing more is written
            self._release()

    def _write_out(self, length: int) -> None:
        written = 0
        while written < length:
            try:
                written += os.write(self._descriptor, self._view[written:length])
            except OSError as err:
                if err.errno != errno.EINVAL or not self._leave_direct_io():
                    raise
        self._filled = 0

    def _leave_direct_io(self) -> bool:
        """The file system refused an aligned direct write: go on through the page cache."""
        import fcntl  # (Linux here: O_DIRECT was granted)

        flags = fcntl.fcntl(self._descriptor, fcntl.F_GETFL)
        if not flags & os.O_DIRECT:
            return False
        fcntl.fcntl(self._descriptor, fcntl.F_SETFL, flags & ~os.O_DIRECT)
        return True

    def _release(self) -> None:
        if self._closed:
            return
        self._closed = True
        os.close(self._descriptor)
        self._view.release()
        self._staging.close()
