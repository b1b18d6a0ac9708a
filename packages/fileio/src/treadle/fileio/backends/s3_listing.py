"""Listing an S3 prefix as a directory tree, for S3Backend.

S3 has only keys: a "directory" is a common prefix of keys ending in ``/``. A one-level listing
asks S3 for the common prefixes (``Delimiter='/'``); a recursive one lists every key under the
prefix once and derives the directories from the keys, which costs one request per 1000 keys
instead of one per directory.
"""

from __future__ import annotations

from ..errors import file_not_found
from .base import PathLike, check_list_arguments
from .s3_host import S3Host
from .s3_paths import dir_prefix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


class S3ListingMixin(S3Host):
    """``list_dir_or_file`` of S3Backend, and the flat key listing its other operations use.

    The host class provides ``_client``, ``_parse``, ``_errors``, ``_prefix_exists`` and
    ``name``, as S3Backend does.

    Example:
        >>> sorted(S3Backend().list_dir_or_file('s3://bucket/data', recursive=True))
        ['a.txt', 'sub', 'sub/b.txt']
    """

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
        # Checked here, not in the generator, so that bad arguments fail at the call.
        check_list_arguments(list_dir, suffix)
        bucket, key = self._parse(dir_path)
        prefix = dir_prefix(key)
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
        # Whether the prefix holds any key, even one filtered out: an empty listing of an
        # existing directory is fine, of a missing one is FileNotFoundError.
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
                # A key ending in "/" is a directory marker (made by consoles), not a file.
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
