"""What S3Backend provides to the mixins it is made of (S3ListingMixin, S3CopiesMixin).

Declared for the type checker only: at run time the class is empty, and S3Backend defines
every member below.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from contextlib import AbstractContextManager
    from typing import Any

    from .base import PathLike


class S3Host:
    if TYPE_CHECKING:
        _client: Any

        @property
        def name(self) -> str: ...
        def exists(self, filepath: PathLike) -> bool: ...
        def isdir(self, filepath: PathLike) -> bool: ...
        def _map_path(self, filepath: PathLike) -> str: ...
        def _parse(self, filepath: PathLike) -> tuple[str, str]: ...
        def _errors(
            self, operation: str, filepath: PathLike, bucket: str, key: str
        ) -> AbstractContextManager[None]: ...
        def _transfer_manager(self) -> Any: ...
        def _object_exists(self, bucket: str, key: str, filepath: PathLike) -> bool: ...
        def _prefix_exists(self, bucket: str, key: str, filepath: PathLike) -> bool: ...
        def _keys(self, bucket: str, prefix: str, filepath: PathLike) -> Iterator[str]: ...
