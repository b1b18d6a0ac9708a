"""BaseStorageBackend: the operations every backend offers, and what the optional ones say
when a backend cannot do them."""

from __future__ import annotations

import os
from abc import ABCMeta, abstractmethod

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from contextlib import AbstractContextManager

PathLike = str | os.PathLike[str]


class BaseStorageBackend(metaclass=ABCMeta):
    """A place files live: local disks, object stores, fsspec filesystems.

    Subclasses must implement ``get`` (bytes) and ``get_text``; every other operation raises
    NotImplementedError naming the backend until a subclass provides it.

    Example:
        >>> class EchoBackend(BaseStorageBackend):
        ...     def get(self, filepath):
        ...         return str(filepath).encode()
        ...     def get_text(self, filepath, encoding='utf-8'):
        ...         return str(filepath)
        >>> EchoBackend().get('a/b')
        b'a/b'
    """

    # Whether the backend can make symbolic links; MMEngine deprecates reading it.
    _allow_symlink = False

    @property
    def allow_symlink(self) -> bool:
        return self._allow_symlink

    @property
    def name(self) -> str:
        return type(self).__name__

    @abstractmethod
    def get(self, filepath: PathLike) -> bytes:
        """The content of ``filepath``."""

    @abstractmethod
    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        """The content of ``filepath``, decoded."""

    def _unsupported(self, operation: str) -> NotImplementedError:
        return NotImplementedError(f"{self.name} does not support {operation}")

    def put(self, obj: bytes, filepath: PathLike) -> None:
        raise self._unsupported("put")

    def put_text(self, obj: str, filepath: PathLike, encoding: str = "utf-8") -> None:
        self.put(text_to_bytes(obj, encoding), filepath)

    def exists(self, filepath: PathLike) -> bool:
        raise self._unsupported("exists")

    def isdir(self, filepath: PathLike) -> bool:
        raise self._unsupported("isdir")

    def isfile(self, filepath: PathLike) -> bool:
        raise self._unsupported("isfile")

    def join_path(self, filepath: PathLike, *filepaths: PathLike) -> str:
        raise self._unsupported("join_path")

    def get_local_path(self, filepath: PathLike) -> AbstractContextManager[PathLike]:
        raise self._unsupported("get_local_path")

    def copyfile(self, src: PathLike, dst: PathLike) -> PathLike:
        raise self._unsupported("copyfile")

    def copytree(self, src: PathLike, dst: PathLike) -> PathLike:
        raise self._unsupported("copytree")

    def copyfile_from_local(self, src: PathLike, dst: PathLike) -> PathLike:
        raise self._unsupported("copyfile_from_local")

    def copytree_from_local(self, src: PathLike, dst: PathLike) -> PathLike:
        raise self._unsupported("copytree_from_local")

    def copyfile_to_local(self, src: PathLike, dst: PathLike) -> PathLike:
        raise self._unsupported("copyfile_to_local")

    def copytree_to_local(self, src: PathLike, dst: PathLike) -> PathLike:
        raise self._unsupported("copytree_to_local")

    def remove(self, filepath: PathLike) -> None:
        raise self._unsupported("remove")

    def rmtree(self, dir_path: PathLike) -> None:
        raise self._unsupported("rmtree")

    def copy_if_symlink_fails(self, src: PathLike, dst: PathLike) -> bool:
        """Copy ``src`` (a file or a tree) to ``dst`` and return False: what a backend that
        makes no links does. Backends that can link try that first."""
        if self.isfile(src):
            self.copyfile(src, dst)
        else:
            self.copytree(src, dst)
        return False

    def list_dir_or_file(
        self,
        dir_path: PathLike,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        raise self._unsupported("list_dir_or_file")

    def generate_presigned_url(
        self, url: str, client_method: str = "get_object", expires_in: int = 3600
    ) -> str:
        raise self._unsupported("generate_presigned_url")


def text_to_bytes(obj: str, encoding: str) -> bytes:
    """``obj`` encoded; a TypeError (what writing to a text file raises) for anything but str."""
    if not isinstance(obj, str):
        raise TypeError(f"put_text writes a str, not {type(obj).__name__}; use put for bytes")
    return obj.encode(encoding)


def check_list_arguments(list_dir: bool, suffix: object) -> None:
    """The argument checks of list_dir_or_file, the same on every backend."""
    if list_dir and suffix is not None:
        raise TypeError("`suffix` should be None when `list_dir` is True")
    if suffix is not None and not isinstance(suffix, (str, tuple)):
        raise TypeError(f"`suffix` must be a string or tuple of strings, got {suffix!r}")


def join_with_slashes(filepath: str, *filepaths: str) -> str:
    """Join the parts of an object-store path with one '/' between parts, whatever slashes
    they carry; the last part keeps a trailing '/', and the protocol's '://' stays."""
    head = filepath
    while head.endswith("/") and not head.endswith("://"):
        head = head[:-1]
    parts = [head]
    for index, part in enumerate(filepaths):
        part = part.lstrip("/")
        parts.append(part if index == len(filepaths) - 1 else part.rstrip("/"))
    return "/".join(parts) if not head.endswith("://") else head + "/".join(parts[1:])


def basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]
