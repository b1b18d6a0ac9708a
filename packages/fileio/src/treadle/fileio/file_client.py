"""FileClient: MMEngine's older, deprecated way to reach a storage backend, kept because research
code still uses it. Every call goes to one of treadle.fileio's backends; new code should call
the functions of treadle.fileio (``get``, ``put``, ``exists``...) with ``backend_args``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

from .backends import (
    BaseStorageBackend,
    HardDiskBackend,
    HTTPBackend,
    LmdbBackend,
    MemcachedBackend,
    PetrelBackend,
    S3Backend,
)
from .backends.registry_utils import check_backend_class
from .errors import FileioTypeError

PathLike = str | os.PathLike[str]

_DEPRECATED = (
    "FileClient is deprecated (MMEngine deprecated it in 0.8): call the functions of "
    "treadle.fileio (get, put, exists, ...) with backend_args, or get_file_backend(), instead"
)


class FileClient:
    """One storage backend behind MMEngine's ``FileClient`` API; warns that it is deprecated.

    ``backend`` names a registered backend (``'disk'``, ``'lmdb'``, ``'http'``, ...), or
    ``prefix`` a path prefix (``'s3'``, ``'http'``); with neither, the local disk. The other
    keyword arguments go to the backend. Clients are cached: the same arguments give the same
    object. With neither ``backend`` nor ``prefix`` (or ``backend='disk'``), the backend is
    HardDiskBackend, the deprecated name of LocalBackend, as in MMEngine. Unlike MMEngine, whose
    ``s3`` prefix needs SenseTime's Petrel SDK, ``s3`` paths go to treadle's S3Backend (boto3).

    Example:
        >>> client = FileClient()  # doctest: +SKIP
        >>> client.put_text('hello', '/tmp/a.txt')  # doctest: +SKIP
        >>> FileClient.infer_client(uri='/tmp/a.txt').get_text('/tmp/a.txt')  # doctest: +SKIP
        'hello'
    """

    _backends: ClassVar[dict[str, type[BaseStorageBackend]]] = {
        "disk": HardDiskBackend,  # deprecated, as FileClient is: it warns, as in MMEngine
        "memcached": MemcachedBackend,
        "lmdb": LmdbBackend,
        "petrel": PetrelBackend,
        "http": HTTPBackend,
        "s3": S3Backend,
    }
    _prefix_to_backends: ClassVar[dict[str, type[BaseStorageBackend]]] = {
        "s3": S3Backend,
        "petrel": PetrelBackend,
        "http": HTTPBackend,
        "https": HTTPBackend,
    }
    _instances: ClassVar[dict[str, FileClient]] = {}

    client: BaseStorageBackend

    def __new__(
        cls, backend: str | None = None, prefix: str | None = None, **kwargs: Any
    ) -> FileClient:
        warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
        if backend is None and prefix is None:
            backend = "disk"
        if backend is not None and backend not in cls._backends:
            raise ValueError(
                f"FileClient: backend {backend!r} is not supported. Currently supported ones are "
                f"{list(cls._backends)}"
            )
        if prefix is not None and prefix not in cls._prefix_to_backends:
            raise ValueError(
                f"FileClient: prefix {prefix!r} is not supported. Currently supported ones are "
                f"{list(cls._prefix_to_backends)}"
            )
        # One client per arguments, as MMEngine caches them (a re-registered backend changes
        # the class behind a name, so the cached client of the old one is dropped there).
        key = ":".join([str(backend), str(prefix), *(f"{k}:{v}" for k, v in kwargs.items())])
        instance = cls._instances.get(key)
        if instance is None:
            instance = super().__new__(cls)
            if backend is not None:
                backend_cls = cls._backends[backend]
            else:
                assert prefix is not None  # not both None: backend is "disk" then (above)
                backend_cls = cls._prefix_to_backends[prefix]
            instance.client = backend_cls(**kwargs)
            cls._instances[key] = instance
        return instance

    @property
    def name(self) -> str:
        """The backend's name (its class name)."""
        return self.client.name

    @property
    def allow_symlink(self) -> bool:
        """Whether the backend can make symbolic links."""
        return self.client.allow_symlink

    @staticmethod
    def parse_uri_prefix(uri: PathLike) -> str | None:
        """``'s3'`` for ``'s3://bucket/key'`` and ``'cluster:s3://...'``; None for a local path."""
        if not isinstance(uri, (str, os.PathLike)):
            raise FileioTypeError(
                f"FileClient.parse_uri_prefix: uri must be a str or a path, got {uri!r}"
            )
        head, separator, _ = str(uri).partition("://")
        if not separator:
            return None
        return head.rpartition(":")[2]

    @classmethod
    def infer_client(
        cls, file_client_args: dict[str, Any] | None = None, uri: PathLike | None = None
    ) -> FileClient:
        """The client ``file_client_args`` describes, else the one for ``uri``'s prefix."""
        if file_client_args is None and uri is None:
            raise ValueError("FileClient.infer_client needs file_client_args or uri")
        if file_client_args is None:
            return cls(prefix=cls.parse_uri_prefix(uri))  # type: ignore[arg-type]
        return cls(**file_client_args)

    @classmethod
    def _register_backend(
        cls,
        name: str,
        backend: type[BaseStorageBackend],
        force: bool = False,
        prefixes: str | list[str] | tuple[str, ...] | None = None,
    ) -> None:
        check_backend_class(name, backend)
        if not force and name in cls._backends:
            raise KeyError(
                f"{name} is already registered as a storage backend, add force=True to override"
            )
        if name in cls._backends and force:
            # Cached clients of the replaced backend must not be handed out any more.
            for key, instance in list(cls._instances.items()):
                if isinstance(instance.client, cls._backends[name]):
                    del cls._instances[key]
        cls._backends[name] = backend
        if isinstance(prefixes, str):
            prefixes = [prefixes]
        for prefix in prefixes or ():
            if prefix in cls._prefix_to_backends and not force:
                raise KeyError(
                    f"{prefix} is already registered as a storage backend, add force=True to "
                    "override"
                )
            cls._prefix_to_backends[prefix] = backend

    @classmethod
    def register_backend(
        cls,
        name: str,
        backend: type[BaseStorageBackend] | None = None,
        force: bool = False,
        prefixes: str | list[str] | tuple[str, ...] | None = None,
    ) -> Callable[..., Any] | None:
        """Register a backend class under ``name`` (and path ``prefixes``) for FileClient only;
        without ``backend``, a class decorator."""
        if backend is not None:
            cls._register_backend(name, backend, force=force, prefixes=prefixes)
            return None

        def decorate(backend_cls: type[BaseStorageBackend]) -> type[BaseStorageBackend]:
            cls._register_backend(name, backend_cls, force=force, prefixes=prefixes)
            return backend_cls

        return decorate

    def get(self, filepath: PathLike) -> bytes:
        return self.client.get(filepath)

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        return self.client.get_text(filepath, encoding)

    def put(self, obj: bytes, filepath: PathLike) -> None:
        self.client.put(obj, filepath)

    def put_text(self, obj: str, filepath: PathLike) -> None:
        self.client.put_text(obj, filepath)

    def remove(self, filepath: PathLike) -> None:
        self.client.remove(filepath)

    def exists(self, filepath: PathLike) -> bool:
        return self.client.exists(filepath)

    def isdir(self, filepath: PathLike) -> bool:
        return self.client.isdir(filepath)

    def isfile(self, filepath: PathLike) -> bool:
        return self.client.isfile(filepath)

    def join_path(self, filepath: PathLike, *filepaths: PathLike) -> str:
        return self.client.join_path(filepath, *filepaths)

    @contextmanager
    def get_local_path(self, filepath: PathLike) -> Iterator[PathLike]:
        """A local file with ``filepath``'s content for the ``with`` block."""
        with self.client.get_local_path(str(filepath)) as local_path:
            yield local_path

    def list_dir_or_file(
        self,
        dir_path: PathLike,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        """Relative paths of the directories and/or files under ``dir_path``."""
        yield from self.client.list_dir_or_file(dir_path, list_dir, list_file, suffix, recursive)
