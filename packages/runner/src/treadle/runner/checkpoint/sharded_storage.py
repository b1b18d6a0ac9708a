"""Sharded checkpoints on S3 and every other treadle.fileio store: torch.distributed.checkpoint's
file writer and reader, with their file system swapped for treadle.fileio.

DCP ships ``FsspecWriter``/``FsspecReader``, but S3 through fsspec needs s3fs, which treadle
does not depend on; treadle.fileio already reaches S3 (boto3, with its retries and errors that
name the bucket and key) and every fsspec store. DCP's ``FileSystemWriter`` does its I/O through
a small file system object (open a stream, join, rename, exists, remove): giving it one over
treadle.fileio keeps DCP's own file layout, planning and async machinery unchanged. Its every
operation goes through the backend that ``backend_args`` describe (the endpoint and credentials
given to CheckpointHook, as for whole-file checkpoints), else the default one of the path.

Each file is one object: written from memory when its stream closes (a rank's shard file is
held in memory once while it is uploaded), read whole when opened. Objects appear whole, so
there is no temporary folder to rename: the ranks write under the checkpoint's own name and
``.metadata``, which DCP writes after every rank's files, is the completion marker.

Example:
    >>> dcp.save(state, storage_writer=fileio_writer('s3://bucket/run/epoch_1.pth'))
    ...     # doctest: +SKIP
    >>> writer = fileio_writer('s3://bucket/run/epoch_1.pth',
    ...                        dict(endpoint_url='http://127.0.0.1:9000'))  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from typing import Any

from treadle import fileio

# Backends that cannot hold a sharded checkpoint: they write nothing (http(s)://, lmdb) or
# would write a URL as a local folder name (backend_args naming 'local' for s3://...).
_CANNOT_HOLD = (fileio.LocalBackend, fileio.HTTPBackend, fileio.LmdbBackend)


def store_backend(path: str | os.PathLike, backend_args: dict | None = None) -> Any:
    """The treadle.fileio backend that holds the sharded checkpoint at the URL ``path``:
    the one ``backend_args`` describe (endpoint, credentials...), else the default one of
    the path's prefix. Raises ValueError naming the backend where it cannot hold one.

    Example:
        >>> store_backend('s3://bucket/run/epoch_1.pth',
        ...               {'endpoint_url': 'http://127.0.0.1:9000'})  # doctest: +SKIP
        <treadle.fileio.backends.s3_backend.S3Backend object at ...>
    """
    path = os.fspath(path)
    backend = fileio.get_file_backend(path, backend_args=backend_args, enable_singleton=True)
    if isinstance(backend, _CANNOT_HOLD):
        named = f"backend_args {backend_args} name" if backend_args else "its path names"
        raise ValueError(
            f"sharded checkpoint {path}: {named} the backend {type(backend).__name__}, which "
            "cannot hold a sharded checkpoint (torch.distributed.checkpoint writes one object "
            "per rank): save it to a local path, s3:// or another writable treadle.fileio store"
        )
    return backend


class _Upload(io.BytesIO):
    """A file written in memory and put as the object ``path`` through ``backend`` when
    closed (DCP's writer closes its streams itself, inside the ``with`` block)."""

    def __init__(self, backend: Any, path: str) -> None:
        super().__init__()
        self._backend = backend
        self._path = path
        self._finished = False

    def close(self) -> None:
        if not self._finished and not self.closed:
            self._finished = True
            self._backend.put(self.getvalue(), self._path)
        super().close()

    def abort(self) -> None:
        self._finished = True
        super().close()


def _file_system_base() -> type:
    from torch.distributed.checkpoint.filesystem import FileSystemBase

    return FileSystemBase


def _make_file_system(backend_args: dict | None) -> Any:
    class FileioFileSystem(_file_system_base()):  # type: ignore[misc]
        """DCP's file system over treadle.fileio URLs (``s3://bucket/prefix``, ``memory://``...),
        every operation through the backend ``backend_args`` describe."""

        def backend(self, path: str | os.PathLike) -> Any:
            # A singleton per backend and arguments: an S3 client is made once per process.
            return store_backend(path, backend_args)

        @contextlib.contextmanager
        def create_stream(self, path: str | os.PathLike, mode: str) -> Iterator[io.BytesIO]:
            path = os.fspath(path)
            if "r" in mode:
                yield io.BytesIO(self.backend(path).get(path))
                return
            upload = _Upload(self.backend(path), path)
            try:
                yield upload
            except BaseException:
                upload.abort()  # only a stream written to the end becomes an object
                raise
            upload.close()

        def concat_path(self, path: str | os.PathLike, suffix: str) -> str:
            path = os.fspath(path)
            return self.backend(path).join_path(path, suffix)

        def init_path(self, path: str | os.PathLike, **kwargs: Any) -> str:
            return os.fspath(path)

        def rename(self, path: str | os.PathLike, new_path: str | os.PathLike) -> None:
            # DCP renames only .metadata.tmp to .metadata: a small object.
            backend = self.backend(path)
            backend.put(backend.get(path), os.fspath(new_path))
            backend.remove(path)

        def mkdir(self, path: str | os.PathLike) -> None:
            pass  # object stores have prefixes, made by the objects under them

        @classmethod
        def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike) -> bool:
            return "://" in os.fspath(checkpoint_id)

        def exists(self, path: str | os.PathLike) -> bool:
            return self.backend(path).exists(path)

        def rm_file(self, path: str | os.PathLike) -> None:
            self.backend(path).remove(path)

    return FileioFileSystem()


def is_store_path(path: str | os.PathLike) -> bool:
    """Whether a sharded checkpoint at ``path`` goes through treadle.fileio (any URL but
    ``file://``), rather than DCP's local file writer.

    Example:
        >>> is_store_path('s3://bucket/run/epoch_1.pth'), is_store_path('work_dirs/epoch_1.pth')
        (True, False)
    """
    path = os.fspath(path)
    return "://" in path and not path.startswith("file://")


def use_fileio(storage: Any, path: str, backend_args: dict | None = None) -> Any:
    """``storage`` (a DCP FileSystemWriter or FileSystemReader) made to read and write the
    treadle.fileio URL ``path``, through the backend ``backend_args`` describe (default: the
    one of the path's prefix).

    Example:
        >>> writer = use_fileio(FileSystemWriter(url, sync_files=False), url)  # doctest: +SKIP
    """
    storage.fs = _make_file_system(backend_args)
    storage.path = storage.fs.init_path(path)
    return storage


def fileio_writer(path: str, backend_args: dict | None = None) -> Any:
    """DCP's file writer over treadle.fileio, writing the checkpoint folder ``path`` through
    the backend ``backend_args`` describe (default: the one of the path's prefix).

    Example:
        >>> writer = fileio_writer('s3://bucket/run/epoch_1.pth',
        ...                        {'endpoint_url': 'http://127.0.0.1:9000'})  # doctest: +SKIP
    """
    from torch.distributed.checkpoint import FileSystemWriter

    # fsync means nothing for an object; an object that exists is whole.
    return use_fileio(FileSystemWriter(path, sync_files=False), path, backend_args)
