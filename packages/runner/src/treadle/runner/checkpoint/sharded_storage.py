"""Sharded checkpoints on S3 and every other treadle.fileio store: torch.distributed.checkpoint's
file writer and reader, with their file system swapped for treadle.fileio.

DCP ships ``FsspecWriter``/``FsspecReader``, but S3 through fsspec needs s3fs, which treadle
does not depend on; treadle.fileio already reaches S3 (boto3, with its retries and errors that
name the bucket and key) and every fsspec store. DCP's ``FileSystemWriter`` does its I/O through
a small file system object (open a stream, join, rename, exists, remove): giving it one over
treadle.fileio keeps DCP's own file layout, planning and async machinery unchanged.

Each file is one object: written from memory when its stream closes (a rank's shard file is
held in memory once while it is uploaded), read whole when opened. Objects appear whole, so
there is no temporary folder to rename: the ranks write under the checkpoint's own name and
``.metadata``, which DCP writes after every rank's files, is the completion marker.

Example:
    >>> dcp.save(state, storage_writer=fileio_writer('s3://bucket/run/epoch_1.pth'))
    ...     # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from typing import Any

from treadle import fileio


class _Upload(io.BytesIO):
    """A file written in memory and put as the object ``path`` when closed (DCP's writer
    closes its streams itself, inside the ``with`` block)."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self._path = path
        self._finished = False

    def close(self) -> None:
        if not self._finished and not self.closed:
            self._finished = True
            fileio.put(self.getvalue(), self._path)
        super().close()

    def abort(self) -> None:
        self._finished = True
        super().close()


def _file_system_base() -> type:
    from torch.distributed.checkpoint.filesystem import FileSystemBase

    return FileSystemBase


def _make_file_system() -> Any:
    class FileioFileSystem(_file_system_base()):  # type: ignore[misc]
        """DCP's file system over treadle.fileio URLs (``s3://bucket/prefix``, ``memory://``...)."""

        @contextlib.contextmanager
        def create_stream(self, path: str | os.PathLike, mode: str) -> Iterator[io.BytesIO]:
            path = os.fspath(path)
            if "r" in mode:
                yield io.BytesIO(fileio.get(path))
                return
            upload = _Upload(path)
            try:
                yield upload
            except BaseException:
                upload.abort()  # only a stream written to the end becomes an object
                raise
            upload.close()

        def concat_path(self, path: str | os.PathLike, suffix: str) -> str:
            return fileio.join_path(os.fspath(path), suffix)

        def init_path(self, path: str | os.PathLike, **kwargs: Any) -> str:
            return os.fspath(path)

        def rename(self, path: str | os.PathLike, new_path: str | os.PathLike) -> None:
            # DCP renames only .metadata.tmp to .metadata: a small object.
            fileio.put(fileio.get(path), new_path)
            fileio.remove(path)

        def mkdir(self, path: str | os.PathLike) -> None:
            pass  # object stores have prefixes, made by the objects under them

        @classmethod
        def validate_checkpoint_id(cls, checkpoint_id: str | os.PathLike) -> bool:
            return "://" in os.fspath(checkpoint_id)

        def exists(self, path: str | os.PathLike) -> bool:
            return fileio.exists(path)

        def rm_file(self, path: str | os.PathLike) -> None:
            fileio.remove(path)

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


def use_fileio(storage: Any, path: str) -> Any:
    """``storage`` (a DCP FileSystemWriter or FileSystemReader) made to read and write the
    treadle.fileio URL ``path``.

    Example:
        >>> writer = use_fileio(FileSystemWriter(url, sync_files=False), url)  # doctest: +SKIP
    """
    storage.fs = _make_file_system()
    storage.path = storage.fs.init_path(path)
    return storage


def fileio_writer(path: str) -> Any:
    """DCP's file writer over treadle.fileio, writing the checkpoint folder ``path``.

    Example:
        >>> writer = fileio_writer('s3://bucket/run/epoch_1.pth')  # doctest: +SKIP
    """
    from torch.distributed.checkpoint import FileSystemWriter

    # fsync means nothing for an object; an object that exists is whole.
    return use_fileio(FileSystemWriter(path, sync_files=False), path)
