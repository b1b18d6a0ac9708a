"""LocalBackend: files on a local disk, with plain Python file objects."""

from __future__ import annotations

import errno
import os
from contextlib import contextmanager

from ..atomic import atomic_temporary_path, atomic_write
from ..errors import file_not_found
from .base import BaseStorageBackend, PathLike, check_list_arguments, text_to_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


class LocalBackend(BaseStorageBackend):
    """Local files. Writes are atomic (a temporary file next to the destination, then a
    rename); ``fsync=True`` also flushes them to the disk before the rename.

    Example:
        >>> backend = LocalBackend()
        >>> backend.put(b'hello', '/tmp/treadle/hello.txt')
        >>> backend.get_text('/tmp/treadle/hello.txt')
        'hello'
    """

    _allow_symlink = True

    def __init__(self, fsync: bool = False) -> None:
        self.fsync = fsync

    def get(self, filepath: PathLike) -> bytes:
        try:
            with open(filepath, "rb") as file:
                return file.read()
        except FileNotFoundError:
            raise file_not_found(filepath, self.name) from None

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        try:
            with open(filepath, encoding=encoding) as file:
                return file.read()
        except FileNotFoundError:
            raise file_not_found(filepath, self.name) from None

    def put(self, obj: bytes, filepath: PathLike) -> None:
        _make_parent(filepath)
        atomic_write(filepath, obj, self.fsync)

    def put_text(self, obj: str, filepath: PathLike, encoding: str = "utf-8") -> None:
        self.put(text_to_bytes(obj, encoding), filepath)

    def exists(self, filepath: PathLike) -> bool:
        return os.path.exists(filepath)

    def isdir(self, filepath: PathLike) -> bool:
        return os.path.isdir(filepath)

    def isfile(self, filepath: PathLike) -> bool:
        return os.path.isfile(filepath)

    def join_path(self, filepath: PathLike, *filepaths: PathLike) -> str:
        return os.path.join(filepath, *filepaths)

    @contextmanager
    def get_local_path(self, filepath: PathLike) -> Iterator[PathLike]:
        """The file is already local: yield its path as it is, and never remove it."""
        if not os.path.exists(filepath):
            raise file_not_found(filepath, self.name)
        yield filepath

    def copyfile(self, src: PathLike, dst: PathLike) -> PathLike:
        """Copy a file; into ``dst`` when it is a directory. The copy is atomic."""
        import shutil

        if not os.path.isfile(src):
            if os.path.isdir(src):
                raise IsADirectoryError(
                    f"copyfile copies files, and {os.fspath(src)!r} is a directory"
                )
            raise file_not_found(src, self.name)
        if os.path.isdir(dst):
            dst = os.path.join(dst, os.path.basename(src))
        if os.path.exists(dst) and os.path.samefile(src, dst):
            raise shutil.SameFileError(
                f"{os.fspath(src)!r} and {os.fspath(dst)!r} are the same file"
            )
        _make_parent(dst)
        with atomic_temporary_path(dst, self.fsync) as temporary:
            shutil.copyfile(src, temporary)
            shutil.copymode(src, temporary)
        return dst

    def copytree(self, src: PathLike, dst: PathLike) -> PathLike:
        """Copy a directory tree to ``dst``, which must not exist."""
        import shutil

        _check_directory(src, self.name)
        if os.path.exists(dst):
            raise FileExistsError(f"copytree's destination {os.fspath(dst)!r} already exists")
        return shutil.copytree(src, dst)

    # Both sides are local: copying from or to "local" is an ordinary copy.
    def copyfile_from_local(self, src: PathLike, dst: PathLike) -> PathLike:
        return self.copyfile(src, dst)

    def copytree_from_local(self, src: PathLike, dst: PathLike) -> PathLike:
        return self.copytree(src, dst)

    def copyfile_to_local(self, src: PathLike, dst: PathLike) -> PathLike:
        return self.copyfile(src, dst)

    def copytree_to_local(self, src: PathLike, dst: PathLike) -> PathLike:
        return self.copytree(src, dst)

    def remove(self, filepath: PathLike) -> None:
        if not os.path.lexists(filepath):
            raise file_not_found(filepath, self.name)
        if os.path.isdir(filepath) and not os.path.islink(filepath):
            raise IsADirectoryError(
                f"remove deletes files, and {os.fspath(filepath)!r} is a directory; use rmtree"
            )
        os.remove(filepath)

    def rmtree(self, dir_path: PathLike) -> None:
        import shutil

        _check_directory(dir_path, self.name)
        shutil.rmtree(dir_path)

    def copy_if_symlink_fails(self, src: PathLike, dst: PathLike) -> bool:
        """Link ``dst`` to ``src``; copy instead where links cannot be made. True if linked."""
        try:
            os.symlink(src, dst)
            return True
        # Whatever stops the link (an OSError, a filesystem or platform that raises something
        # else), a copy is still wanted, as in MMEngine; a copy that fails raises its own error.
        except Exception:
            return super().copy_if_symlink_fails(src, dst)

    def list_dir_or_file(
        self,
        dir_path: PathLike,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        """Paths under ``dir_path``, relative to it, in no particular order. Files whose names
        start with '.' are left out (as in MMEngine), among them the temporary files of
        writes in progress, and so is whatever is neither a file nor a directory (a broken
        link, a named pipe)."""
        check_list_arguments(list_dir, suffix)
        _check_directory(dir_path, self.name)
        return _scan(os.fspath(dir_path), "", list_dir, list_file, suffix, recursive)


def _scan(
    directory: str,
    relative: str,
    list_dir: bool,
    list_file: bool,
    suffix: str | tuple[str, ...] | None,
    recursive: bool,
) -> Iterator[str]:
    with os.scandir(directory) as entries:
        found = list(entries)
    for entry in found:
        path = relative + entry.name
        if entry.is_dir():
            if list_dir:
                yield path
            if recursive:
                yield from _scan(entry.path, path + os.sep, list_dir, list_file, suffix, recursive)
        elif (
            list_file
            and not entry.name.startswith(".")
            and entry.is_file()
            and (suffix is None or path.endswith(suffix))
        ):
            yield path


def _check_directory(path: PathLike, backend: str) -> None:
    """FileNotFoundError if ``path`` is missing, NotADirectoryError if it is something else
    (what os.scandir and shutil.rmtree raise, named here before any work starts)."""
    if os.path.isdir(path):
        return
    if not os.path.exists(path):
        raise file_not_found(path, backend)
    raise NotADirectoryError(errno.ENOTDIR, f"Not a directory ({backend})", os.fspath(path))


def _make_parent(filepath: PathLike) -> None:
    parent = os.path.dirname(filepath)
    if parent and not os.path.isdir(parent):
        os.makedirs(parent, exist_ok=True)


class HardDiskBackend(LocalBackend):
    """MMEngine's older name of the local backend, which ``FileClient('disk')`` makes; it warns
    that it is deprecated. Its ``name`` is ``'HardDiskBackend'``, as in MMEngine.

    Example:
        >>> HardDiskBackend().get_text('/tmp/treadle/hello.txt')  # doctest: +SKIP
        'hello'
    """

    def __init__(self, fsync: bool = False) -> None:
        import warnings

        warnings.warn(
            "HardDiskBackend is the older name of LocalBackend and is deprecated (as in "
            "MMEngine): use LocalBackend, or the functions of treadle.fileio",
            DeprecationWarning,
            stacklevel=2,
        )
        super().__init__(fsync=fsync)
