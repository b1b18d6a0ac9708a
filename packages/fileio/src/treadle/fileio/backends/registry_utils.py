"""Which backend serves a path: registered names and prefixes, and cached backend instances.

A path's prefix is what precedes '://' (``s3`` in ``s3://bucket/key``; ``''`` for local
paths; a cluster name before it, as in ``cluster:s3://...``, is ignored). A registered prefix
picks its backend; any other prefix that fsspec knows (an implementation the user installed)
goes to FsspecBackend, and anything else is an error listing the registered prefixes.
"""

from __future__ import annotations

import threading

from ..errors import FileioTypeError, UnknownBackendError
from .base import BaseStorageBackend
from .fsspec_backend import FsspecBackend
from .http_backend import HTTPBackend
from .lmdb_backend import LmdbBackend
from .local_backend import LocalBackend
from .s3_backend import S3Backend
from .unsupported import MemcachedBackend, PetrelBackend

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Callable
    from typing import Any

#: Backend classes by the name ``backend_args={'backend': name}`` selects.
backends: dict[str, type[BaseStorageBackend]] = {}
#: Backend classes by the path prefix that selects them.
prefix_to_backends: dict[str, type[BaseStorageBackend]] = {}
#: Backends made by get_file_backend(enable_singleton=True), by class and arguments.
backend_instances: dict[tuple[Any, ...], BaseStorageBackend] = {}
_instances_lock = threading.Lock()


def _register_backend(
    name: str,
    backend: type[BaseStorageBackend],
    force: bool = False,
    prefixes: str | list[str] | tuple[str, ...] | None = None,
) -> None:
    check_backend_class(name, backend)
    if isinstance(prefixes, str):
        prefixes = [prefixes]
    elif prefixes is None:
        prefixes = []
    elif not isinstance(prefixes, (list, tuple)) or not all(isinstance(p, str) for p in prefixes):
        raise FileioTypeError(f"prefixes must be a str or a list of str, got {prefixes!r}")
    if not force:
        if name in backends:
            raise ValueError(
                f"{name} is already registered as a storage backend "
                f"({backends[name].__name__}); pass force=True to replace it"
            )
        for prefix in prefixes:
            if prefix in prefix_to_backends:
                raise ValueError(
                    f"the prefix {prefix} is already registered (to "
                    f"{prefix_to_backends[prefix].__name__}); pass force=True to replace it"
                )
    backends[name] = backend
    for prefix in prefixes:
        prefix_to_backends[prefix] = backend


def check_backend_class(name: object, backend: object) -> None:
    """The TypeErrors of registering ``backend`` under ``name`` (with MMEngine's phrases)."""
    if not isinstance(name, str):
        raise TypeError(f"the backend name should be a string, got {type(name).__name__}")
    if not isinstance(backend, type):
        raise TypeError(
            f"backend should be a class (a subclass of BaseStorageBackend), got "
            f"{type(backend).__name__} {backend!r}"
        )
    if not issubclass(backend, BaseStorageBackend):
        raise TypeError(
            f"backend {backend.__name__} is not a subclass of BaseStorageBackend, which every "
            "storage backend must derive from"
        )


def register_backend(
    name: str,
    backend: type[BaseStorageBackend] | None = None,
    force: bool = False,
    prefixes: str | list[str] | tuple[str, ...] | None = None,
) -> Callable[..., Any] | None:
    """Register a backend class under ``name`` and, optionally, the path prefixes it serves.

    Usable as a function or, without ``backend``, as a class decorator.

    Example:
        >>> @register_backend('echo', prefixes='echo')
        ... class EchoBackend(BaseStorageBackend):
        ...     def get(self, filepath):
        ...         return str(filepath).encode()
        ...     def get_text(self, filepath, encoding='utf-8'):
        ...         return str(filepath)
        >>> get('echo://hello')
        b'echo://hello'
    """
    if backend is not None:
        _register_backend(name, backend, force=force, prefixes=prefixes)
        return None

    def decorate(cls: type[BaseStorageBackend]) -> type[BaseStorageBackend]:
        _register_backend(name, cls, force=force, prefixes=prefixes)
        return cls

    return decorate


def parse_uri_prefix(uri: str | os.PathLike[str]) -> str:
    """``'s3'`` for ``'s3://b/k'`` and ``'cluster:s3://b/k'``; ``''`` for a local path."""
    uri = str(uri)
    head, separator, _ = uri.partition("://")
    if not separator:
        return ""
    if "::" in head:  # an fsspec chain such as simplecache::s3://...
        return head
    return head.rpartition(":")[2]


def _describe_prefixes() -> str:
    return ", ".join(
        f"{prefix!r} ({cls.__name__})" for prefix, cls in sorted(prefix_to_backends.items())
    )


def _backend_for_prefix(prefix: str, uri: object) -> type[BaseStorageBackend]:
    backend = prefix_to_backends.get(prefix)
    if backend is not None:
        return backend
    if FsspecBackend.knows_protocol(prefix):
        return FsspecBackend
    raise UnknownBackendError(
        f"no file backend serves the prefix {prefix!r} of {str(uri)!r}: the registered prefixes "
        f"are {_describe_prefixes()}, and fsspec knows no {prefix!r} protocol either "
        "(install its fsspec implementation, or register a backend with register_backend)"
    )


def _freeze(value: object) -> object:
    """A hashable stand-in for backend arguments, the same for equal arguments."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


def get_file_backend(
    uri: str | os.PathLike[str] | None = None,
    *,
    backend_args: dict[str, Any] | None = None,
    enable_singleton: bool = False,
) -> BaseStorageBackend:
    """The backend for ``uri``'s prefix, or the one ``backend_args['backend']`` names; the
    other keys of ``backend_args`` are its constructor's arguments.

    With ``enable_singleton=True`` (what every function of treadle.fileio uses), one instance
    is made per backend class and arguments, and reused: an S3 client is made once.

    Example:
        >>> get_file_backend('s3://bucket/key', backend_args={'region_name': 'eu-west-1'})
        <treadle.fileio.backends.s3_backend.S3Backend object at ...>
    """
    arguments = dict(backend_args) if backend_args else {}
    name = arguments.pop("backend", None)
    if name is not None:
        if name not in backends:
            raise UnknownBackendError(
                f"backend_args names the backend {name!r}, which is not registered: "
                f"registered backends are {', '.join(sorted(backends))}"
            )
        backend_cls = backends[name]
    elif uri is None:
        raise ValueError(
            "uri should not be None when backend_args names no 'backend': get_file_backend "
            "picks the backend from the uri's prefix"
        )
    else:
        backend_cls = _backend_for_prefix(parse_uri_prefix(uri), uri)
    if not enable_singleton:
        return backend_cls(**arguments)
    key = (backend_cls, _freeze(arguments))
    backend = backend_instances.get(key)
    if backend is None:
        with _instances_lock:
            backend = backend_instances.get(key)
            if backend is None:
                backend = backend_cls(**arguments)
                backend_instances[key] = backend
    return backend


register_backend("local", LocalBackend, prefixes="")
register_backend("disk", LocalBackend)  # the name MMEngine's FileClient used
register_backend("s3", S3Backend, prefixes="s3")
register_backend("fsspec", FsspecBackend, prefixes=["memory", "file"])
register_backend("http", HTTPBackend, prefixes=["http", "https"])
register_backend("lmdb", LmdbBackend)
# Registered so that configs naming them get their explanation rather than "not registered".
register_backend("petrel", PetrelBackend, prefixes="petrel")
register_backend("memcached", MemcachedBackend)
