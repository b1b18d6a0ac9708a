"""DiskWriteback: a background write's bytes go to the disk as they are written, and leave the
page cache once they are there: for a file system that does not take ``O_DIRECT``
(:mod:`.direct_file`, which writes around the page cache, is tried first).

Left to the kernel, a checkpoint stays dirty in the page cache until the kernel's flusher
threads write it back in one burst, seconds later and at training's priority (and ext4 writes
back in one go, at ``close``, a file that was truncated to zero when it was opened). Such a
burst made the training steps it fell on up to 3x longer on a 2-core machine, however gently
the write itself had been spread over the steps. Here each piece is sent to the disk as soon
as it is in the page cache (``sync_file_range``); the piece before it, whose disk write has had
a piece's time to finish, is waited for and dropped from the page cache
(``posix_fadvise(DONTNEED)``). About two pieces of the file are in memory at a time, and the
disk's work is spread over the steps as the write is.

Linux only: elsewhere, and on a file system that refuses these calls, the file is written as
any other and the kernel writes it back when it chooses.
"""

from __future__ import annotations

import io
import os
import sys
from typing import IO, Any

# SYNC_FILE_RANGE_* (linux/fs.h)
_WAIT_BEFORE = 1
_WRITE = 2
_WAIT_AFTER = 4
# False: not looked up yet; None: not available here.
_sync_file_range: Any = False


def _sync_file_range_function() -> Any:
    global _sync_file_range
    if _sync_file_range is False:
        _sync_file_range = None
        if sys.platform.startswith("linux") and hasattr(os, "posix_fadvise"):
            import ctypes

            try:
                function = ctypes.CDLL(None, use_errno=True).sync_file_range
            except (OSError, AttributeError):  # no libc symbols (a static interpreter)
                return None
            function.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
            function.restype = ctypes.c_int
            _sync_file_range = function
    return _sync_file_range


class DiskWriteback:
    """Sends the bytes written to ``file`` to the disk by pieces of ``piece_bytes``, and drops
    each piece from the page cache once it is on the disk.

    Example:
        >>> with open(path, 'wb') as file:
        ...     writeback = DiskWriteback.of(file, piece_bytes=4 << 20)
        ...     for chunk in chunks:
        ...         file.write(chunk)
        ...         if writeback is not None:
        ...             writeback.advance(len(chunk))
        ...     if writeback is not None:
        ...         writeback.finish()
    """

    def __init__(self, file: IO[bytes], descriptor: int, function: Any, piece_bytes: int) -> None:
        self._file = file
        self._descriptor = descriptor
        self._function = function
        self._piece_bytes = piece_bytes
        self._written = 0  # bytes handed to the file
        self._started = 0  # bytes whose disk write was started
        self._dropped = 0  # bytes on the disk and out of the page cache
        self._refused = False

    @classmethod
    def of(cls, file: IO[bytes], piece_bytes: int) -> DiskWriteback | None:
        """A writeback for ``file`` (written from its start); None where the system has none
        or the file has no descriptor."""
        function = _sync_file_range_function()
        if function is None:
            return None
        try:
            descriptor = file.fileno()
        except (AttributeError, OSError, io.UnsupportedOperation):
            return None
        return cls(file, descriptor, function, piece_bytes)

    def advance(self, nbytes: int, *, drop: bool = True) -> None:
        """``nbytes`` more were written to the file. With ``drop=False`` (someone waits for the
        write: it should go at memory speed) their disk write is started, nothing waited for."""
        self._written += nbytes
        if self._refused or self._written - self._started < self._piece_bytes:
            return
        self._file.flush()  # what the file object buffers reaches the page cache first
        if not self._call(self._started, self._written - self._started, _WRITE):
            return
        if drop and self._started > self._dropped:
            length = self._started - self._dropped
            if self._call(self._dropped, length, _WAIT_BEFORE | _WRITE | _WAIT_AFTER):
                try:
                    os.posix_fadvise(
                        self._descriptor, self._dropped, length, os.POSIX_FADV_DONTNEED
                    )
                except OSError:
                    self._refused = True
            self._dropped = self._started
        self._started = self._written

    def finish(self) -> None:
        """Start the disk write of what is left (before the file is closed; nothing waits)."""
        if self._refused:
            return
        self._file.flush()
        self._call(self._started, 0, _WRITE)  # a length of 0: to the end of the file

    def _call(self, offset: int, length: int, flags: int) -> bool:
        if self._function(self._descriptor, offset, length, flags) == 0:
            return True
        # A file system that refuses (a pipe, some FUSE mounts): the kernel writes it back.
        self._refused = True
        return False


def open_untruncated(path: str) -> IO[bytes]:
    """``open(path, 'wb')`` without ``O_TRUNC`` for a file that is new and empty: ext4
    (``auto_da_alloc``) writes a file truncated to zero back in one go when it is closed, which
    is the burst :class:`DiskWriteback` is there to avoid. A file with content is truncated.

    Example:
        >>> with open_untruncated('/tmp/new.bin') as file:
        ...     file.write(b'data')
    """
    descriptor = open_emptied(path)
    try:
        return os.fdopen(descriptor, "wb")
    except BaseException:
        os.close(descriptor)
        raise


def open_emptied(path: str, flags: int = 0) -> int:
    """A descriptor of ``path`` open for writing (with ``flags`` added), created if missing;
    emptied with ``ftruncate`` only if it has content, never opened with ``O_TRUNC`` (see
    :func:`open_untruncated`)."""
    flags |= os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(path, flags, 0o666)
    try:
        if os.fstat(descriptor).st_size:
            os.ftruncate(descriptor, 0)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor
