"""``s3://bucket/key`` paths: path_mapping, and splitting a path into its bucket and key.

Pure string work, so it imports nothing from boto3.
"""

from __future__ import annotations

import os

from .base import PathLike


def check_path_mapping(path_mapping: object) -> dict[str, str] | None:
    """``path_mapping`` itself, after checking that it is a dict or None."""
    if path_mapping is not None and not isinstance(path_mapping, dict):
        raise TypeError(f"path_mapping must be a dict or None, got {path_mapping!r}")
    return path_mapping


def map_path(filepath: PathLike, path_mapping: dict[str, str] | None) -> str:
    """``filepath`` with the first ``old`` replaced by ``new`` for each ``{old: new}`` of
    ``path_mapping``, and with forward slashes (S3 keys never hold backslashes as separators,
    but Windows paths joined onto an s3:// prefix do)."""
    path = os.fspath(filepath)
    for old, new in (path_mapping or {}).items():
        path = path.replace(old, new, 1)
    return path.replace("\\", "/")


def parse_s3_url(filepath: PathLike, path_mapping: dict[str, str] | None) -> tuple[str, str]:
    """``(bucket, key)`` of an ``s3://bucket/key`` path, after path_mapping.

    A scheme with a prefix (``alias:s3://``) is accepted, as MMEngine's prefixes are.

    Example:
        >>> parse_s3_url('s3://bucket/dir/a.txt', None)
        ('bucket', 'dir/a.txt')
    """
    path = map_path(filepath, path_mapping)
    head, separator, rest = path.partition("://")
    bucket, _, key = rest.partition("/")
    if not separator or head.rpartition(":")[2] != "s3" or not bucket:
        raise ValueError(f"S3Backend serves s3://bucket/key paths, got {os.fspath(filepath)!r}")
    return bucket, key


def dir_prefix(key: str) -> str:
    """The key prefix of everything inside the "directory" ``key``: ``key/``, or ``''`` for
    the bucket itself (S3 has no directories, only common key prefixes)."""
    return key.rstrip("/") + "/" if key.strip("/") else ""
