"""Atomic writes of local files: a reader sees the old file or the new one, never a part.

The data goes to a temporary file in the destination's directory (so the final rename never
crosses a file system), which then takes the destination's place in one step.

Nothing is fsynced unless asked: a rename already protects readers from half-written files, and
fsync costs more than the write itself on most disks; ``fsync=True`` adds durability across a
crash of the machine. For the same reason an existing destination is swapped with the new file
(Linux's ``renameat2(RENAME_EXCHANGE)``) and the old one, now under the temporary name, is then
unlinked: ext4 (``auto_da_alloc``) flushes any file renamed over an existing one, which made a
plain ``os.replace`` of 256 MiB several times slower than ``open().write()``. Where exchange is
not available, ``os.replace`` is used.
"""

from __future__ import annotations

import os
import stat
import sys
from contextlib import contextmanager, suppress

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100
# False: not looked up yet; None: not available.
_renameat2: Callable[..., Any] | bool | None = False


def _create_temporary(path: str) -> tuple[str, int]:
    """Create a new, empty, hidden file next to ``path``; return its name and a descriptor
    open for writing."""
    directory, name = os.path.split(path)
    while True:
        temporary = os.path.join(directory, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            # 0o666 minus the umask: the permissions a plain open(path, 'w') would give.
            return temporary, os.open(temporary, _FLAGS, 0o666)
        except FileExistsError:
            continue


def _exchange_function() -> Callable[..., Any] | None:
    global _renameat2
    if _renameat2 is False:
        _renameat2 = None
        if sys.platform.startswith("linux"):
            import ctypes

            try:
                function = ctypes.CDLL(None, use_errno=True).renameat2
            except (OSError, AttributeError):  # glibc < 2.28, or no libc symbols
                return None
            function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
            function.argtypes.append(ctypes.c_uint)
            function.restype = ctypes.c_int
            _renameat2 = function
    return _renameat2 if callable(_renameat2) else None


def _exchange(temporary: str, path: str) -> bool:
    """Swap two existing files in one step; False where the system cannot."""
    function = _exchange_function()
    if function is None:
        return False
    source, target = os.fsencode(temporary), os.fsencode(path)
    status: int = function(_AT_FDCWD, source, _AT_FDCWD, target, _RENAME_EXCHANGE)
    return status == 0


def _fsync(path: str) -> None:
    try:
        fd = os.open(path or ".", os.O_RDONLY)
    except OSError:  # some platforms cannot open directories
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _put_in_place(temporary: str, path: str, fsync: bool) -> None:
    try:
        existing = os.stat(path)
    except FileNotFoundError:
        existing = None
    if existing is not None:
        os.chmod(temporary, stat.S_IMODE(existing.st_mode))
    if fsync:
        _fsync(temporary)
    if existing is not None and stat.S_ISREG(existing.st_mode) and _exchange(temporary, path):
        os.unlink(temporary)  # now the old file
    else:
        os.replace(temporary, path)
    if fsync:
        _fsync(os.path.dirname(path))


@contextmanager
def atomic_temporary_path(path: str | os.PathLike[str], fsync: bool = False) -> Iterator[str]:
    """Yield a temporary path next to ``path``; when the block ends without an error, the file
    written there takes the place of ``path``. On an error it is removed and ``path`` is left
    as it was.

    The destination's permissions are kept when it exists, and a symlink is written through
    (its target is replaced, not the link).

    Example:
        >>> with atomic_temporary_path('/data/model.bin') as temporary:
        ...     shutil.copyfile('/cache/model.bin', temporary)
    """
    path = _resolve_link(path)
    temporary, descriptor = _create_temporary(path)
    os.close(descriptor)
    try:
        yield temporary
        _put_in_place(temporary, path, fsync)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def atomic_write(
    path: str | os.PathLike[str], data: bytes | bytearray | memoryview, fsync: bool = False
) -> None:
    """Write ``data`` to ``path`` atomically (see the module's docstring).

    Example:
        >>> atomic_write('/tmp/weights.bin', b'...')
    """
    path = _resolve_link(path)
    temporary, descriptor = _create_temporary(path)
    try:
        # Written through the descriptor that created the file: reopening it with
        # open(temporary, 'wb') would truncate it, and ext4 (auto_da_alloc) flushes a file
        # truncated to zero when it is closed, which doubled the time of a large put.
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        _put_in_place(temporary, path, fsync)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(temporary)
        raise


def _resolve_link(path: str | os.PathLike[str]) -> str:
    """A symlink is written through: its target is replaced, not the link."""
    path = os.fspath(path)
    return os.path.realpath(path) if os.path.islink(path) else path
