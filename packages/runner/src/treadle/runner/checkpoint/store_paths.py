"""Checkpoint paths on a store (``s3://...``) beside local ones: the CheckpointHook's
``backend_args`` (endpoint, credentials) describe its store, so they go with URLs only, and a
local work_dir beside an S3 out_dir is read as it is."""

from __future__ import annotations

import os
from typing import Any

from treadle import fileio


def store_args(path: str | os.PathLike, backend_args: dict | None) -> dict | None:
    """``backend_args`` where ``path`` is a URL, None for a local path.

    Example:
        >>> store_args('s3://bucket/run', {'endpoint_url': 'http://minio:9000'})
        {'endpoint_url': 'http://minio:9000'}
        >>> store_args('work_dirs/run', {'endpoint_url': 'http://minio:9000'}) is None
        True
    """
    return backend_args if "://" in os.fspath(path) else None


def path_backend(path: str | os.PathLike, backend_args: dict | None = None) -> Any:
    """The treadle.fileio backend of ``path``, with ``backend_args`` where it is a URL.

    Example:
        >>> type(path_backend('work_dirs/run', {'endpoint_url': 'http://minio:9000'})).__name__
        'LocalBackend'
    """
    return fileio.get_file_backend(
        os.fspath(path), backend_args=store_args(path, backend_args), enable_singleton=True
    )


def same_location(first: str, second: str) -> bool:
    """Whether two checkpoint paths name the same place: URLs as written (a trailing slash
    aside), local paths once absolute.

    Example:
        >>> same_location('s3://bucket/run/', 's3://bucket/run')
        True
    """
    if "://" in first or "://" in second:
        return first.rstrip("/") == second.rstrip("/")
    return os.path.abspath(first) == os.path.abspath(second)
