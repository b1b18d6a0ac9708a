"""S3Backend: Amazon S3 and S3-compatible stores (MinIO, Ceph RGW, ...) through boto3.

boto3 is imported when the first backend is made, never by ``import treadle.fileio``.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from ..errors import file_not_found
from ..optional import import_boto3
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

MiB = 1024 * 1024
_PAGE = 1000  # S3 lists and deletes at most 1000 keys per request


class S3Backend(BaseStorageBackend):
    """Files in S3 buckets, as ``s3://bucket/key`` paths.

    Credentials, region and endpoint come from boto3's usual configuration chain (the
    ``AWS_*`` environment variables, ``AWS_ENDPOINT_URL`` among them, ``~/.aws/config`` and
    ``~/.aws/credentials``, instance roles) unless given here. One boto3 client is made per
    backend and shared by all threads (boto3 clients are thread-safe; sessions are not).

    Objects larger than ``multipart_threshold`` go through boto3's transfer manager:
    multipart uploads and ranged downloads of ``multipart_chunksize`` parts, ``max_concurrency``
    at a time. A failed multipart upload is aborted, so no partial object is left behind.

    Every HTTP request that fails transiently (5xx, throttling, connection reset, timeout) is
    retried up to ``max_attempts`` tries in all, waiting ``backoff * 2**n`` seconds (at most
    ``max_backoff``, with jitter) in between; then the error names the bucket and the key.

    Args:
        path_mapping: ``{'old': 'new'}`` replaces the first ``old`` in every path by ``new``
            before use, like MMEngine's PetrelBackend.
        endpoint_url, region_name, aws_access_key_id, aws_secret_access_key,
        aws_session_token, profile_name: override the configuration chain.
        addressing_style: 'path', 'virtual' or 'auto' (botocore's default).
        client_config: more keyword arguments for ``botocore.config.Config``.

    Example:
        >>> backend = S3Backend(endpoint_url='http://127.0.0.1:9000', max_attempts=3)
        >>> backend.put(b'hello', 's3://bucket/hello.txt')
        >>> backend.get('s3://bucket/hello.txt')
        b'hello'
    """

    def __init__(
        self,
        path_mapping: dict[str, str] | None = None,
        *,
        endpoint_url: str | None = None,
        region_name: str | None = None,
        aws_access_key_id: str | None = None,
        aws_secret_access_key: str | None = None,
        aws_session_token: str | None = None,
        profile_name: str | None = None,
        addressing_style: str | None = None,
        multipart_threshold: int = 8 * MiB,
        multipart_chunksize: int = 8 * MiB,
        max_concurrency: int = 10,
        max_attempts: int = 5,
        backoff: float = 0.1,
        max_backoff: float = 20.0,
        client_config: dict | None = None,
    ) -> None:
        if path_mapping is not None and not isinstance(path_mapping, dict):
            raise TypeError(f"path_mapping must be a dict or None, got {path_mapping!r}")
        self.path_mapping = path_mapping
        boto3 = import_boto3()
        from boto3.s3.transfer import TransferConfig
        from botocore.config import Config

        from .s3_retry import RetryPolicy

        self.retry_policy = RetryPolicy(max_attempts, backoff, max_backoff)
        config = Config(
            # Our retry policy decides (see s3_retry); botocore makes one try per request.
            retries={"mode": "standard", "total_max_attempts": 1},
            max_pool_connections=max(10, max_concurrency + 2),
            s3={"addressing_style": addressing_style} if addressing_style else None,
            **(client_config or {}),
        )
        session = boto3.session.Session(
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
            region_name=region_name,
            profile_name=profile_name,
        )
        self._client = session.client("s3", endpoint_url=endpoint_url, config=config)
        self._client.meta.events.register("needs-retry.s3", self.retry_policy.needs_retry)
        self.transfer_config = TransferConfig(
            multipart_threshold=multipart_threshold,
            multipart_chunksize=multipart_chunksize,
            max_concurrency=max_concurrency,
        )

    @property
    def client(self):
        """The boto3 S3 client, for what this backend does not offer."""
        return self._client

    # -- paths ---------------------------------------------------------------------------------

    def _map_path(self, filepath: PathLike) -> str:
        path = os.fspath(filepath)
        for old, new in (self.path_mapping or {}).items():
            path = path.replace(old, new, 1)
        return path.replace("\\", "/")

    def _parse(self, filepath: PathLike) -> tuple[str, str]:
        """``(bucket, key)`` of an ``s3://bucket/key`` path, after path_mapping."""
        path = self._map_path(filepath)
        head, separator, rest = path.partition("://")
        bucket, _, key = rest.partition("/")
        if not separator or head.rpartition(":")[2] != "s3" or not bucket:
            raise ValueError(f"S3Backend serves s3://bucket/key paths, got {os.fspath(filepath)!r}")
        return bucket, key

    @contextmanager
    def _errors(self, operation: str, filepath: PathLike, bucket: str, key: str) -> Iterator[None]:
        """Turn boto3's errors into FileNotFoundError or StorageError naming bucket and key."""
        from .s3_retry import storage_error

        try:
            yield
        except Exception as exc:
            # Only boto3's errors are translated; ours (and the user's) pass through as they are.
            if not type(exc).__module__.startswith(("botocore", "boto3", "s3transfer")):
                raise
            raise storage_error(
                exc, operation, os.fspath(filepath), bucket, key, self.retry_policy
            ) from exc

    def _transfer_manager(self):
        from boto3.s3.transfer import create_transfer_manager

        return create_transfer_manager(self._client, self.transfer_config)

    # -- bytes ---------------------------------------------------------------------------------

    def get(self, filepath: PathLike) -> bytes:
        bucket, key = self._parse(filepath)
        attempt = 1
        with self._errors("get", filepath, bucket, key):
            while True:
                response = self._client.get_object(Bucket=bucket, Key=key)
                body = response["Body"]
                if response["ContentLength"] > self.transfer_config.multipart_threshold:
                    # Large: drop this stream, fetch ranges in parallel.
                    body.close()
                    return self._download_bytes(bucket, key)
                try:
                    return body.read()
                except Exception as exc:  # the connection broke while streaming the body
                    from .s3_retry import is_transient

                    if attempt == self.retry_policy.max_attempts or not is_transient(exc):
                        raise
                    import time

                    time.sleep(self.retry_policy.delay(attempt))
                    attempt += 1

    def _download_bytes(self, bucket: str, key: str) -> bytes:
        import io

        buffer = io.BytesIO()
        with self._transfer_manager() as manager:
            manager.download(bucket, key, buffer).result()
        return buffer.getvalue()

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        return self.get(filepath).decode(encoding)

    def put(self, obj: bytes, filepath: PathLike) -> None:
        """Write ``obj`` as one object; larger than ``multipart_threshold``, as a multipart
        upload that is aborted if any part fails. Readers see the old object or the new one."""
        bucket, key = self._parse(filepath)
        if isinstance(obj, memoryview):
            obj = obj.tobytes()
        with self._errors("put", filepath, bucket, key):
            if len(obj) <= self.transfer_config.multipart_threshold:
                self._client.put_object(Bucket=bucket, Key=key, Body=obj)
                return
            import io

            with self._transfer_manager() as manager:
                manager.upload(io.BytesIO(obj), bucket, key).result()

    def put_text(self, obj: str, filepath: PathLike, encoding: str = "utf-8") -> None:
        self.put(text_to_bytes(obj, encoding), filepath)

    # -- queries -------------------------------------------------------------------------------

    def _object_exists(self, bucket: str, key: str, filepath: PathLike) -> bool:
        if not key or key.endswith("/"):
            return False
        with self._errors("isfile", filepath, bucket, key):
            try:
                self._client.head_object(Bucket=bucket, Key=key)
            except self._client.exceptions.ClientError as exc:
                if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                    return False
                raise
        return True

    def _prefix_exists(self, bucket: str, key: str, filepath: PathLike) -> bool:
        with self._errors("isdir", filepath, bucket, key):
            if not key.strip("/"):  # the bucket itself
                try:
                    self._client.head_bucket(Bucket=bucket)
                except self._client.exceptions.ClientError as exc:
                    if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchBucket"):
                        return False
                    raise
                return True
            prefix = key.rstrip("/") + "/"
            try:
                response = self._client.list_objects_v2(Bucket=bucket, Prefix=prefix, MaxKeys=1)
            except self._client.exceptions.NoSuchBucket:
                return False
            return response.get("KeyCount", 0) > 0

    def isfile(self, filepath: PathLike) -> bool:
        bucket, key = self._parse(filepath)
        return self._object_exists(bucket, key, filepath)

    def isdir(self, filepath: PathLike) -> bool:
        """True when some key starts with ``key/`` (S3 has no directories, only prefixes)."""
        bucket, key = self._parse(filepath)
        return self._prefix_exists(bucket, key, filepath)

    def exists(self, filepath: PathLike) -> bool:
        bucket, key = self._parse(filepath)
        return self._object_exists(bucket, key, filepath) or self._prefix_exists(
            bucket, key, filepath
        )

    def join_path(self, filepath: PathLike, *filepaths: PathLike) -> str:
        return join_with_slashes(self._map_path(filepath), *map(self._map_path, filepaths))

    # -- listing -------------------------------------------------------------------------------

    def _keys(self, bucket: str, prefix: str, filepath: PathLike) -> Iterator[str]:
        """Every key under ``prefix``, through as many list requests as it takes."""
        paginator = self._client.get_paginator("list_objects_v2")
        with self._errors("list", filepath, bucket, prefix):
            for page in paginator.paginate(Bucket=bucket, Prefix=prefix):
                for item in page.get("Contents", ()):
                    yield item["Key"]

    def list_dir_or_file(
        self,
        dir_path: PathLike,
        list_dir: bool = True,
        list_file: bool = True,
        suffix: str | tuple[str, ...] | None = None,
        recursive: bool = False,
    ) -> Iterator[str]:
        """Paths under ``dir_path``, relative to it. Directories are the common prefixes of
        keys; a recursive listing is one flat, paginated listing of the prefix."""
        check_list_arguments(list_dir, suffix)
        bucket, key = self._parse(dir_path)
        prefix = key.rstrip("/") + "/" if key.strip("/") else ""
        return self._list(dir_path, bucket, prefix, list_dir, list_file, suffix, recursive)

    def _list(
        self,
        dir_path: PathLike,
        bucket: str,
        prefix: str,
        list_dir: bool,
        list_file: bool,
        suffix: str | tuple[str, ...] | None,
        recursive: bool,
    ) -> Iterator[str]:
        found = False
        if recursive:
            seen_dirs: set[str] = set()
            for key in self._keys(bucket, prefix, dir_path):
                found = True
                relative = key[len(prefix) :]
                parts = relative.split("/")
                for depth in range(1, len(parts)):
                    directory = "/".join(parts[:depth])
                    if directory not in seen_dirs:
                        seen_dirs.add(directory)
                        if list_dir:
                            yield directory
                if parts[-1] and list_file and (suffix is None or relative.endswith(suffix)):
                    yield relative
        else:
            paginator = self._client.get_paginator("list_objects_v2")
            pages = paginator.paginate(Bucket=bucket, Prefix=prefix, Delimiter="/")
            with self._errors("list", dir_path, bucket, prefix):
                for page in pages:
                    for common in page.get("CommonPrefixes", ()):
                        found = True
                        if list_dir:
                            yield common["Prefix"][len(prefix) : -1]
                    for item in page.get("Contents", ()):
                        found = True
                        relative = item["Key"][len(prefix) :]
                        if relative and list_file and (suffix is None or relative.endswith(suffix)):
                            yield relative
        if not found and not self._prefix_exists(bucket, prefix, dir_path):
            raise file_not_found(dir_path, self.name, f"bucket {bucket!r}, prefix {prefix!r}")

    # -- copies --------------------------------------------------------------------------------

    def _destination(self, src: PathLike, dst: PathLike) -> str:
        """``dst``, or ``dst/<name of src>`` when ``dst`` is a directory."""
        dst_path = self._map_path(dst)
        if dst_path.endswith("/") or self.isdir(dst_path):
            return join_with_slashes(dst_path, basename(os.fspath(src).replace("\\", "/")))
        return dst_path

    def _run_all(self, submit: Iterable, operation: str, filepath: PathLike) -> None:
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
        src_prefix = src_key.rstrip("/") + "/" if src_key.strip("/") else ""
        dst_prefix = dst_key.rstrip("/") + "/" if dst_key.strip("/") else ""
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
        prefix = key.rstrip("/") + "/" if key.strip("/") else ""
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
        prefix = key.rstrip("/") + "/" if key.strip("/") else ""
        dst = os.fspath(dst)
        downloads = []
        for object_key in self._keys(bucket, prefix, src):
            relative = object_key[len(prefix) :]
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

    # -- removal -------------------------------------------------------------------------------

    def remove(self, filepath: PathLike) -> None:
        bucket, key = self._parse(filepath)
        if not self._object_exists(bucket, key, filepath):
            if self._prefix_exists(bucket, key, filepath):
                raise IsADirectoryError(
                    f"remove deletes files, and {os.fspath(filepath)!r} is a directory; use rmtree"
                )
            raise file_not_found(filepath, self.name, f"bucket {bucket!r}, key {key!r}")
        with self._errors("remove", filepath, bucket, key):
            self._client.delete_object(Bucket=bucket, Key=key)

    def rmtree(self, dir_path: PathLike) -> None:
        """Delete every object under the prefix, 1000 per request."""
        bucket, key = self._parse(dir_path)
        prefix = key.rstrip("/") + "/" if key.strip("/") else ""
        keys = list(self._keys(bucket, prefix, dir_path))
        if not keys:
            raise file_not_found(dir_path, self.name, f"bucket {bucket!r}, prefix {prefix!r}")
        with self._errors("rmtree", dir_path, bucket, prefix):
            for start in range(0, len(keys), _PAGE):
                batch = [{"Key": k} for k in keys[start : start + _PAGE]]
                response = self._client.delete_objects(
                    Bucket=bucket, Delete={"Objects": batch, "Quiet": True}
                )
                if response.get("Errors"):
                    first = response["Errors"][0]
                    raise RuntimeError(
                        f"{len(response['Errors'])} objects were not deleted, the first "
                        f"{first.get('Key')!r}: {first.get('Code')} {first.get('Message')}"
                    )

    def copy_if_symlink_fails(self, src: PathLike, dst: PathLike) -> bool:
        """S3 has no links: copy, and return False."""
        if self.isfile(src):
            self.copyfile(src, dst)
        else:
            self.copytree(src, dst)
        return False

    def generate_presigned_url(
        self, url: str, client_method: str = "get_object", expires_in: int = 3600
    ) -> str:
        """A URL that allows ``client_method`` on the object without credentials, for
        ``expires_in`` seconds.

        Example:
            >>> backend.generate_presigned_url('s3://bucket/video.mp4', expires_in=600)
            'https://bucket.s3.amazonaws.com/video.mp4?X-Amz-Algorithm=...'
        """
        bucket, key = self._parse(url)
        with self._errors("generate_presigned_url", url, bucket, key):
            return self._client.generate_presigned_url(
                ClientMethod=client_method,
                Params={"Bucket": bucket, "Key": key},
                ExpiresIn=expires_in,
            )
