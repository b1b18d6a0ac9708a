"""S3Backend: Amazon S3 and S3-compatible stores (MinIO, Ceph RGW, ...) through boto3.

This module holds the reads, writes, queries and removals; the client is built in s3_client,
paths are parsed in s3_paths, listings and copies are mixed in from s3_listing and s3_copies,
and retries are decided in s3_retry. boto3 is imported when the first backend is made, never by
``import treadle.fileio``.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from ..errors import StorageError, file_not_found
from ..optional import import_boto3
from .base import BaseStorageBackend, PathLike, join_with_slashes, text_to_bytes
from .s3_client import MiB, build_client, build_transfer_config, create_transfer_manager
from .s3_copies import S3CopiesMixin
from .s3_listing import S3ListingMixin
from .s3_paths import check_path_mapping, dir_prefix, map_path, parse_s3_url

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

_PAGE = 1000  # S3 lists and deletes at most 1000 keys per request


class S3Backend(S3ListingMixin, S3CopiesMixin, BaseStorageBackend):
    """Files in S3 buckets, as ``s3://bucket/key`` paths.

    Credentials, region and endpoint come from boto3's usual configuration chain (the
    ``AWS_*`` environment variables, ``AWS_ENDPOINT_URL`` among them, ``~/.aws/config`` and
    ``~/.aws/credentials``, instance roles) unless given here. One boto3 client is made per
    backend and shared by all threads (boto3 clients are thread-safe; sessions are not).

    Objects larger than ``multipart_threshold`` move in ``multipart_chunksize`` parts,
    ``max_concurrency`` at a time: multipart uploads (boto3's transfer manager) and ranged
    downloads (``get`` reads the first part from its first GET, see s3_reads; the copies to
    local files use the transfer manager). A failed multipart upload is aborted, so no partial
    object is left behind.

    Every HTTP request that fails transiently (5xx, throttling, connection reset, timeout) is
    retried up to ``max_attempts`` tries in all, waiting ``backoff * 2**n`` seconds (at most
    ``max_backoff``, with jitter) in between; then the error names the bucket and the key.

    Args:
        path_mapping: ``{'old': 'new'}`` replaces the first ``old`` in every path by ``new``
            before use, like MMEngine's PetrelBackend.
        endpoint_url: overrides the configuration chain, as the five below do.
        region_name: overrides the configuration chain.
        aws_access_key_id: overrides the configuration chain.
        aws_secret_access_key: overrides the configuration chain.
        aws_session_token: overrides the configuration chain.
        profile_name: overrides the configuration chain.
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
        client_config: dict[str, Any] | None = None,
    ) -> None:
        self.path_mapping = check_path_mapping(path_mapping)
        # Before s3_retry, which imports botocore: a missing boto3 names the extra to install.
        import_boto3()
        from .s3_retry import RetryPolicy

        self.retry_policy = RetryPolicy(max_attempts, backoff, max_backoff)
        self._client = build_client(
            self.retry_policy,
            endpoint_url=endpoint_url,
            region_name=region_name,
            aws_access_key_id=aws_access_key_id,
            aws_secret_access_key=aws_secret_access_key,
            aws_session_token=aws_session_token,
            profile_name=profile_name,
            addressing_style=addressing_style,
            max_concurrency=max_concurrency,
            client_config=client_config,
        )
        self.transfer_config = build_transfer_config(
            multipart_threshold, multipart_chunksize, max_concurrency
        )

    @property
    def client(self) -> Any:
        """The boto3 S3 client, for what this backend does not offer."""
        return self._client

    # -- paths ---------------------------------------------------------------------------------

    def _map_path(self, filepath: PathLike) -> str:
        return map_path(filepath, self.path_mapping)

    def _parse(self, filepath: PathLike) -> tuple[str, str]:
        """``(bucket, key)`` of an ``s3://bucket/key`` path, after path_mapping."""
        return parse_s3_url(filepath, self.path_mapping)

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

    def _transfer_manager(self) -> Any:
        return create_transfer_manager(self._client, self.transfer_config)

    # -- bytes ---------------------------------------------------------------------------------

    def get(self, filepath: PathLike) -> bytes:
        """The object's bytes: one GET; above ``multipart_threshold``, the first part from
        that GET and the others by ranged GETs in parallel (see s3_reads)."""
        from .s3_reads import ObjectReplacedError, read_object

        bucket, key = self._parse(filepath)
        with self._errors("get", filepath, bucket, key):
            try:
                return read_object(
                    self._client, bucket, key, self.transfer_config, self.retry_policy
                )
            except ObjectReplacedError as exc:
                path = os.fspath(filepath)
                raise StorageError(
                    f"S3Backend: get of {path!r} (bucket {bucket!r}, key {key!r}) failed: {exc}",
                    backend="S3Backend",
                    path=path,
                    bucket=bucket,
                    key=key,
                ) from exc

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
            count: int = response.get("KeyCount", 0)
            return count > 0

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
        prefix = dir_prefix(key)
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
            signed: str = self._client.generate_presigned_url(
                ClientMethod=client_method,
                Params={"Bucket": bucket, "Key": key},
                ExpiresIn=expires_in,
            )
        return signed
