"""The file functions: each one picks the backend of its path's prefix (or the one
``backend_args['backend']`` names), made once per backend and arguments, and calls it.

Example:
    >>> from treadle import fileio
    >>> fileio.put(b'hello', 's3://bucket/hello.txt')
    >>> fileio.get_text('s3://bucket/hello.txt')
    'hello'
    >>> fileio.exists('/tmp/missing', backend_args=None)
    False
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from .backends.registry_utils import get_file_backend, parse_uri_prefix
from .errors import FileioTypeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from .backends.base import BaseStorageBackend

PathLike = str | os.PathLike[str]


def _parse_uri_prefix(uri: PathLike) -> str:
    """The prefix that picks ``uri``'s backend: ``'s3'`` for ``'s3://b/k'`` and
    ``'cluster:s3://b/k'``, ``''`` for a local path. MMEngine's private helper, kept with its
    name and checks for code that calls it; treadle's own code uses
    ``backends.registry_utils.parse_uri_prefix``.

    Example:
        >>> _parse_uri_prefix('https://example.com/a.png')
        'https'
    """
    if not isinstance(uri, (str, os.PathLike)):
        raise FileioTypeError(f"uri must be a str or a path, got {type(uri).__name__} {uri!r}")
    return parse_uri_prefix(uri)


def _backend(path: PathLike, backend_args: dict[str, Any] | None) -> BaseStorageBackend:
    return get_file_backend(path, backend_args=backend_args, enable_singleton=True)


def get(filepath: PathLike, backend_args: dict[str, Any] | None = None) -> bytes:
    """The content of ``filepath``, as bytes."""
    return _backend(filepath, backend_args).get(filepath)


def get_text(
    filepath: PathLike, encoding: str = "utf-8", backend_args: dict[str, Any] | None = None
) -> str:
    """The content of ``filepath``, decoded."""
    return _backend(filepath, backend_args).get_text(filepath, encoding)


def put(obj: bytes, filepath: PathLike, backend_args: dict[str, Any] | None = None) -> None:
    """Write ``obj`` to ``filepath`` atomically, making missing parent directories."""
    _backend(filepath, backend_args).put(obj, filepath)


def put_text(
    obj: str,
    filepath: PathLike,
    encoding: str = "utf-8",
    backend_args: dict[str, Any] | None = None,
) -> None:
    """Write the text ``obj`` to ``filepath`` atomically."""
    _backend(filepath, backend_args).put_text(obj, filepath, encoding)


def exists(filepath: PathLike, backend_args: dict[str, Any] | None = None) -> bool:
    """Whether ``filepath`` is a file or a directory."""
    return _backend(filepath, backend_args).exists(filepath)


def isdir(filepath: PathLike, backend_args: dict[str, Any] | None = None) -> bool:
    """Whether ``filepath`` is a directory (on object stores: a prefix of some key)."""
    return _backend(filepath, backend_args).isdir(filepath)


def isfile(filepath: PathLike, backend_args: dict[str, Any] | None = None) -> bool:
    """Whether ``filepath`` is a file."""
    return _backend(filepath, backend_args).isfile(filepath)


def join_path(
    filepath: PathLike, *filepaths: PathLike, backend_args: dict[str, Any] | None = None
) -> str:
    """Join path parts the way ``filepath``'s backend does ('/' on object stores)."""
    return _backend(filepath, backend_args).join_path(filepath, *filepaths)


@contextmanager
def get_local_path(filepath: PathLike, backend_args: dict[str, Any] | None = None) -> Iterator[str]:
    """A local file with the content of ``filepath`` for the ``with`` block: the file itself
    when it is local, else a temporary copy removed afterwards.

    Example:
        >>> with get_local_path('s3://bucket/video.mp4') as path:
        ...     frames = read_video(path)
    """
    # A str whatever was passed (a Path too), as MMEngine yields.
    with _backend(filepath, backend_args).get_local_path(os.fspath(filepath)) as local_path:
        yield os.fspath(local_path)


def copyfile(src: PathLike, dst: PathLike, backend_args: dict[str, Any] | None = None) -> PathLike:
    """Copy a file within one backend; into ``dst`` when it is a directory. Returns the
    destination file."""
    return _backend(src, backend_args).copyfile(src, dst)


def copytree(src: PathLike, dst: PathLike, backend_args: dict[str, Any] | None = None) -> PathLike:
    """Copy a directory tree within one backend to ``dst``, which must not exist."""
    return _backend(src, backend_args).copytree(src, dst)


def copyfile_from_local(
    src: PathLike, dst: PathLike, backend_args: dict[str, Any] | None = None
) -> PathLike:
    """Copy the local file ``src`` to ``dst`` on ``dst``'s backend."""
    return _backend(dst, backend_args).copyfile_from_local(src, dst)


def copytree_from_local(
    src: PathLike, dst: PathLike, backend_args: dict[str, Any] | None = None
) -> PathLike:
    """Copy the local directory ``src`` to ``dst`` on ``dst``'s backend."""
    return _backend(dst, backend_args).copytree_from_local(src, dst)


def copyfile_to_local(
    src: PathLike, dst: PathLike, backend_args: dict[str, Any] | None = None
) -> PathLike:
    """Copy ``src`` from its backend to the local path ``dst``.

    Unlike MMEngine 0.10, which picks the backend from ``dst`` (always local), the backend
    is the one of ``src``, the side that is not local.
    """
    return _backend(src, backend_args).copyfile_to_local(src, dst)


def copytree_to_local(
    src: PathLike, dst: PathLike, backend_args: dict[str, Any] | None = None
) -> PathLike:
    """Copy the directory ``src`` from its backend to the local directory ``dst``."""
    return _backend(src, backend_args).copytree_to_local(src, dst)


def remove(filepath: PathLike, backend_args: dict[str, Any] | None = None) -> None:
    """Delete a file (IsADirectoryError for a directory, FileNotFoundError if missing)."""
    _backend(filepath, backend_args).remove(filepath)


def rmtree(dir_path: PathLike, backend_args: dict[str, Any] | None = None) -> None:
    """Delete a directory and everything under it."""
    _backend(dir_path, backend_args).rmtree(dir_path)


def copy_if_symlink_fails(
    src: PathLike, dst: PathLike, backend_args: dict[str, Any] | None = None
) -> bool:
    """Link ``dst`` to ``src`` where the backend can, else copy; True if it linked."""
    return _backend(src, backend_args).copy_if_symlink_fails(src, dst)


def list_dir_or_file(
    dir_path: PathLike,
    list_dir: bool = True,
    list_file: bool = True,
    suffix: str | tuple[str, ...] | None = None,
    recursive: bool = False,
    backend_args: dict[str, Any] | None = None,
) -> Iterator[str]:
    """Yield the directories and/or files under ``dir_path``, relative to it, in no
    particular order; ``suffix`` keeps files ending with it (and needs ``list_dir=False``).

    Example:
        >>> sorted(list_dir_or_file('s3://bucket/run1', list_dir=False, suffix='.pth'))
        ['epoch_1.pth', 'epoch_2.pth']
    """
    backend = _backend(dir_path, backend_args)
    yield from backend.list_dir_or_file(dir_path, list_dir, list_file, suffix, recursive)


def generate_presigned_url(
    url: str,
    client_method: str = "get_object",
    expires_in: int = 3600,
    backend_args: dict[str, Any] | None = None,
) -> str:
    """A URL granting ``client_method`` on ``url`` for ``expires_in`` seconds, without
    credentials (S3, and fsspec filesystems that sign URLs)."""
    return _backend(url, backend_args).generate_presigned_url(url, client_method, expires_in)
