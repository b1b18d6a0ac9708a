"""FsspecBackend: every filesystem fsspec has an implementation for (memory://, file://,
http(s)://, and gcs://, az://, hf://, ... when the user installed their packages).

fsspec is imported when the first such path is used, never by ``import treadle.fileio``.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from ..atomic import atomic_temporary_path, atomic_write
from ..errors import file_not_found
from ..optional import missing_extra
from .base import (
    BaseStorageBackend,
    PathLike,
    basename,
    check_list_arguments,
    join_with_slashes,
    text_to_bytes,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from fsspec import AbstractFileSystem

# Protocols whose fsspec implementation ships with one of treadle-fileio's extras.
_EXTRAS = {"http": "http", "https": "http"}


class FsspecBackend(BaseStorageBackend):
    """Any fsspec filesystem, chosen by each path's protocol; ``storage_options`` (the other
    keys of ``backend_args``) go to the filesystem's constructor.

    Example:
        >>> backend = FsspecBackend()
        >>> backend.put(b'hello', 'memory://bucket/hello.txt')
        >>> backend.get('memory://bucket/hello.txt')
        b'hello'
    """

    def __init__(self, **storage_options: object) -> None:
        self.storage_options = storage_options

    @staticmethod
    def knows_protocol(protocol: str) -> bool:
        """Whether fsspec has (or could import) an implementation for ``protocol``."""
        import fsspec

        known = fsspec.available_protocols()
        return all(part.split("://")[0] in known for part in protocol.split("::") if part)

    def _resolve(self, filepath: PathLike) -> tuple[AbstractFileSystem, str]:
        """The filesystem of ``filepath`` and the path it uses for it."""
        from fsspec.core import url_to_fs

        url = os.fspath(filepath)
        try:
            resolved: tuple[AbstractFileSystem, str] = url_to_fs(url, **self.storage_options)
            return resolved
        except ImportError as exc:
            protocol = url.split("://", 1)[0].rpartition("::")[2]
            if protocol in _EXTRAS:
                raise missing_extra(
                    f"fsspec's {protocol}:// filesystem", "aiohttp", _EXTRAS[protocol]
                ) from exc
            raise ImportError(
                f"{protocol}:// paths need an fsspec implementation that is not installed: {exc}"
            ) from exc

    def _not_found(self, filepath: PathLike) -> FileNotFoundError:
        protocol = os.fspath(filepath).split("://", 1)[0] if "://" in os.fspath(filepath) else ""
        return file_not_found(filepath, self.name, f"protocol {protocol!r}")

    @staticmethod
    def _is_local(fs: AbstractFileSystem) -> bool:
        from fsspec.implementations.local import LocalFileSystem

        return isinstance(fs, LocalFileSystem)

    def get(self, filepath: PathLike) -> bytes:
        fs, path = self._resolve(filepath)
        try:
            data: bytes = fs.cat_file(path)
            return data
        except FileNotFoundError:
            raise self._not_found(filepath) from None

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        return self.get(filepath).decode(encoding)

    def put(self, obj: bytes, filepath: PathLike) -> None:
        fs, path = self._resolve(filepath)
        if self._is_local(fs):
            fs.makedirs(fs._parent(path), exist_ok=True)
            atomic_write(path, obj)
        else:
            # Object stores and memory:// replace a whole object at once.
            fs.pipe_file(path, bytes(obj))

    def put_text(self, obj: str, filepath: PathLike, encoding: str = "utf-8") -> None:
        self.put(text_to_bytes(obj, encoding), filepath)

    def exists(self, filepath: PathLike) -> bool:
        fs, path = self._resolve(filepath)
        answer: bool = fs.exists(path)
        return answer

    def isdir(self, filepath: PathLike) -> bool:
        fs, path = self._resolve(filepath)
        answer: bool = fs.isdir(path)
        return answer

    def isfile(self, filepath: PathLike) -> bool:
        fs, path = self._resolve(filepath)
        answer: bool = fs.isfile(path)
        return answer

    def join_path(self, filepath: PathLike, *filepaths: PathLike) -> str:
        return join_with_slashes(os.fspath(filepath), *(os.fspath(p) for p in filepaths))

    @contextmanager
    def get_local_path(self, filepath: PathLike) -> Iterator[str]:
        """A local copy of the file for the ``with`` block (the file itself on file://)."""
        import tempfile

        fs, path = self._resolve(filepath)
        if not fs.isfile(path):
            raise self._not_found(filepath)
        if self._is_local(fs):
            yield path
            return
        with tempfile.TemporaryDirectory(prefix="treadle-fileio-") as directory:
            local = os.path.join(directory, basename(path))
            fs.get_file(path, local)
            yield local

    def _file_destination(self, src: PathLike, dst: PathLike) -> tuple[str, str]:
        """Where copying the file ``src`` to ``dst`` writes: into ``dst`` when it is a
        directory. Returns the path as the user would write it, and as fsspec uses it."""
        fs, dst_path = self._resolve(dst)
        dst = os.fspath(dst)
        if dst.endswith("/") or fs.isdir(dst_path):
            dst = self.join_path(dst, basename(os.fspath(src).replace(os.sep, "/")))
            dst_path = self._resolve(dst)[1]
        return dst, dst_path

    def copyfile(self, src: PathLike, dst: PathLike) -> str:
        import shutil

        fs, src_path = self._resolve(src)
        if not fs.isfile(src_path):
            raise self._not_found(src)
        dst, dst_path = self._file_destination(src, dst)
        if dst_path == src_path:
            raise shutil.SameFileError(f"{os.fspath(src)!r} and {dst!r} are the same file")
        fs.copy(src_path, dst_path)
        return dst

    def copytree(self, src: PathLike, dst: PathLike) -> str:
        fs, src_path = self._resolve(src)
        _, dst_path = self._resolve(dst)
        if not fs.isdir(src_path):
            raise self._not_found(src)
        if fs.exists(dst_path):
            raise FileExistsError(f"copytree's destination {os.fspath(dst)!r} already exists")
        for relative in self._walk_files(fs, src_path):
            fs.copy(join_with_slashes(src_path, relative), join_with_slashes(dst_path, relative))
        return os.fspath(dst)

    def copyfile_from_local(self, src: PathLike, dst: PathLike) -> str:
        if not os.path.isfile(src):
            raise file_not_found(src, "LocalBackend")
        fs, _ = self._resolve(dst)
        dst, dst_path = self._file_destination(src, dst)
        fs.put_file(os.fspath(src), dst_path)
        return dst

    def copytree_from_local(self, src: PathLike, dst: PathLike) -> str:
        fs, dst_path = self._resolve(dst)
        if not os.path.isdir(src):
            raise file_not_found(src, "LocalBackend")
        if fs.exists(dst_path):
            raise FileExistsError(f"copytree's destination {os.fspath(dst)!r} already exists")
        for directory, _, files in os.walk(src):
            relative_dir = os.path.relpath(directory, src).replace(os.sep, "/")
            for name in files:
                relative = name if relative_dir == "." else f"{relative_dir}/{name}"
                fs.put_file(os.path.join(directory, name), join_with_slashes(dst_path, relative))
        return os.fspath(dst)

    def copyfile_to_local(self, src: PathLike, dst: PathLike) -> str:
        fs, src_path = self._resolve(src)
        if not fs.isfile(src_path):
            raise self._not_found(src)
        dst = os.fspath(dst)
        if os.path.isdir(dst):
            dst = os.path.join(dst, basename(src_path))
        parent = os.path.dirname(dst)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with atomic_temporary_path(dst) as temporary:
            fs.get_file(src_path, temporary)
        return dst

    def copytree_to_local(self, src: PathLike, dst: PathLike) -> str:
        fs, src_path = self._resolve(src)
        if not fs.isdir(src_path):
            raise self._not_found(src)
        for relative in self._walk_files(fs, src_path):
            self.copyfile_to_local(
                self.join_path(src, relative), os.path.join(dst, *relative.split("/"))
            )
        return os.fspath(dst)

    def remove(self, filepath: PathLike) -> None:
        fs, path = self._resolve(filepath)
        if fs.isdir(path):
            raise IsADirectoryError(
                f"remove deletes files, and {os.fspath(filepath)!r} is a directory; use rmtree"
            )
        if not fs.isfile(path):
            raise self._not_found(filepath)
        fs.rm_file(path)

    def rmtree(self, dir_path: PathLike) -> None:
        fs, path = self._resolve(dir_path)
        if not fs.isdir(path):
            raise self._not_found(dir_path)
        fs.rm(path, recursive=True)

    def list_dir_or_file(
        self,
        dir_path: PathLike,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        check_list_arguments(list_dir, suffix)
        fs, path = self._resolve(dir_path)
        if not fs.isdir(path):
            raise self._not_found(dir_path)
        root = path.rstrip("/") + "/"
        if recursive:
            entries = fs.find(path, withdirs=True, detail=True).values()
        else:
            entries = fs.ls(path, detail=True)
        return _filter_entries(entries, root, list_dir, list_file, suffix)

    def generate_presigned_url(
        self, url: str, client_method: str = "get_object", expires_in: int = 3600
    ) -> str:
        """A signed URL, from the filesystem's ``sign`` (which many do not implement)."""
        fs, path = self._resolve(url)
        try:
            signed: str = fs.sign(path, expiration=expires_in)
            return signed
        except NotImplementedError:
            raise NotImplementedError(
                f"{self.name} cannot presign {url!r}: {type(fs).__name__} does not sign URLs"
            ) from None

    @staticmethod
    def _walk_files(fs: AbstractFileSystem, root: str) -> Iterator[str]:
        prefix = root.rstrip("/") + "/"
        for name in fs.find(root):
            yield name[len(prefix) :] if name.startswith(prefix) else basename(name)


def _filter_entries(
    entries: Iterable[dict[str, Any]],
    root: str,
    list_dir: bool,
    list_file: bool,
    suffix: str | tuple[str, ...] | None,
) -> Iterator[str]:
    for entry in entries:
        name = entry["name"].rstrip("/")
        if not name.startswith(root):  # the directory itself, which find() lists too
            continue
        relative = name[len(root) :]
        if entry["type"] == "directory":
            if list_dir:
                yield relative
        elif list_file and (suffix is None or relative.endswith(suffix)):
            yield relative
