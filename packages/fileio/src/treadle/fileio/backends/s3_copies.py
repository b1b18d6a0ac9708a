"""Copies within S3 and between S3 and the local disk, for S3Backend.

Every copy goes through boto3's transfer manager: server-side copies inside S3, multipart
uploads and ranged downloads above the backend's ``multipart_threshold``, and many files of a
tree at a time.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from ..errors import file_not_found
from .base import PathLike, basename, join_with_slashes
from .s3_host import S3Host
from .s3_paths import dir_prefix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any


class S3CopiesMixin(S3Host):
    """The copy operations of S3Backend.

    The host class provides ``_parse``, ``_map_path``, ``_errors``, ``_transfer_manager``,
    ``_object_exists``, ``_keys``, ``exists``, ``isdir``, ``isfile`` and ``name``, as
    S3Backend does.

    Example:
        >>> S3Backend().copytree_from_local('data', 's3://bucket/data')
        's3://bucket/data'
    """

    def _destination(self, src: PathLike, dst: PathLike) -> str:
        """``dst``, or ``dst/<name of src>`` when ``dst`` is a directory."""
        dst_path = self._map_path(dst)
        if dst_path.endswith("/") or self.isdir(dst_path):
            return join_with_slashes(dst_path, basename(os.fspath(src).replace("\\", "/")))
        return dst_path

    def _run_all(self, submit: Iterable[Any], operation: str, filepath: PathLike) -> None:
        """Run transfers concurrently in one transfer manager and wait for all of them."""
        bucket, key = self._parse(filepath)
        with self._errors(operation, filepath, bucket, key), self._transfer_manager() as manager:
            futures = [start(manager) for start in submit]
            for future in futures:
                future.result()

    def copyfile(self, src: PathLike, dst: PathLike) -> str:
        """Copy an object within S3, on the server side."""
        import shutil

        src_bucket, src_key = self._parse(src)
        if not self._object_exists(src_bucket, src_key, src):
            raise file_not_found(src, self.name, f"bucket {src_bucket!r}, key {src_key!r}")
        dst = self._destination(src, dst)
        dst_bucket, dst_key = self._parse(dst)
        if (src_bucket, src_key) == (dst_bucket, dst_key):
            raise shutil.SameFileError(f"{os.fspath(src)!r} and {dst!r} are the same object")
        source = {"Bucket": src_bucket, "Key": src_key}
        with self._errors("copy", dst, dst_bucket, dst_key), self._transfer_manager() as manager:
            manager.copy(source, dst_bucket, dst_key).result()
        return dst

    def copytree(self, src: PathLike, dst: PathLike) -> str:
        src_bucket, src_key = self._parse(src)
        dst = self._map_path(dst)
        if self.exists(dst):
            raise FileExistsError(f"copytree's destination {dst!r} already exists")
        dst_bucket, dst_key = self._parse(dst)
        src_prefix = dir_prefix(src_key)
        dst_prefix = dir_prefix(dst_key)
        keys = list(self._keys(src_bucket, src_prefix, src))
        if not keys:
            raise file_not_found(src, self.name, f"bucket {src_bucket!r}, prefix {src_prefix!r}")
        self._run_all(
            (
                lambda m, k=k: m.copy(
                    {"Bucket": src_bucket, "Key": k}, dst_bucket, dst_prefix + k[len(src_prefix) :]
                )
                for k in keys
            ),
            "copytree",
            dst,
        )
        return dst

    def copyfile_from_local(self, src: PathLike, dst: PathLike) -> str:
        """Upload a local file (multipart above the threshold)."""
        if not os.path.isfile(src):
            raise file_not_found(src, "LocalBackend")
        dst = self._destination(src, dst)
        bucket, key = self._parse(dst)
        self._run_all([lambda m: m.upload(os.fspath(src), bucket, key)], "upload", dst)
        return dst

    def copytree_from_local(self, src: PathLike, dst: PathLike) -> str:
        """Upload a local directory tree, many files at a time."""
        if not os.path.isdir(src):
            raise file_not_found(src, "LocalBackend")
        dst = self._map_path(dst)
        if self.exists(dst):
            raise FileExistsError(f"copytree's destination {dst!r} already exists")
        bucket, key = self._parse(dst)
        prefix = dir_prefix(key)
        uploads = []
        for directory, _, files in os.walk(src):
            for name in files:
                local = os.path.join(directory, name)
                relative = os.path.relpath(local, src).replace(os.sep, "/")
                uploads.append((local, prefix + relative))
        self._run_all(
            (lambda m, f=f, k=k: m.upload(f, bucket, k) for f, k in uploads), "copytree", dst
        )
        return dst

    def copyfile_to_local(self, src: PathLike, dst: PathLike) -> str:
        """Download an object to a local file; the file appears whole (the transfer manager
        writes a temporary file and renames it)."""
        bucket, key = self._parse(src)
        dst = os.fspath(dst)
        if os.path.isdir(dst):
            dst = os.path.join(dst, basename(key))
        parent = os.path.dirname(dst)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with self._errors("download", src, bucket, key), self._transfer_manager() as manager:
            manager.download(bucket, key, dst).result()
        return dst

    def copytree_to_local(self, src: PathLike, dst: PathLike) -> str:
        """Download every object under ``src`` into the local directory ``dst``."""
        bucket, key = self._parse(src)
        prefix = dir_prefix(key)
        dst = os.fspath(dst)
        downloads = []
        for object_key in self._keys(bucket, prefix, src):
            relative = object_key[len(prefix) :]
            # Directory markers (keys ending in "/") are no files: skip them.
            if relative and not relative.endswith("/"):
                local = os.path.join(dst, *relative.split("/"))
                os.makedirs(os.path.dirname(local), exist_ok=True)
                downloads.append((object_key, local))
        if not downloads:
            raise file_not_found(src, self.name, f"bucket {bucket!r}, prefix {prefix!r}")
        self._run_all(
            (lambda m, k=k, f=f: m.download(bucket, k, f) for k, f in downloads), "copytree", src
        )
        return dst

    @contextmanager
    def get_local_path(self, filepath: PathLike) -> Iterator[str]:
        """Download the object to a temporary directory for the ``with`` block; the file keeps
        its name (and so its extension)."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="treadle-fileio-") as directory:
            local = os.path.join(directory, basename(self._parse(filepath)[1]) or "object")
            yield self.copyfile_to_local(filepath, local)
