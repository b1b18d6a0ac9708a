"""HTTPBackend: read files from http:// and https:// URLs, through fsspec's HTTP filesystem.

MMEngine reads URLs with ``urllib``; here fsspec's HTTPFileSystem (the ``http`` extra: aiohttp)
does, so ``backend_args`` such as ``client_kwargs={'headers': ...}`` reach it, and exists/isfile
work as well as get, get_text and get_local_path.
"""

from __future__ import annotations

import os

from .base import PathLike
from .fsspec_backend import FsspecBackend

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn


class HTTPBackend(FsspecBackend):
    """Read-only access to files served over HTTP(S); selected by the ``http``/``https`` prefixes
    or ``backend_args={'backend': 'http'}``. Other ``backend_args`` go to fsspec's
    ``HTTPFileSystem``.

    Example:
        >>> backend = HTTPBackend()
        >>> backend.get_text('https://example.com/labels.txt')  # doctest: +SKIP
        'cat\\ndog\\n'
        >>> with backend.get_local_path('https://example.com/w.pth') as path:  # doctest: +SKIP
        ...     print(path)  # a temporary copy, deleted after the block
    """

    def _read_only(self, operation: str, path: PathLike) -> NoReturn:
        raise NotImplementedError(
            f"HTTPBackend cannot {operation} {os.fspath(path)!r}: http(s):// URLs are read-only "
            "in treadle.fileio (as in MMEngine); write to a local path or an object store "
            "(s3://) instead"
        )

    def put(self, obj: bytes, filepath: PathLike) -> None:
        self._read_only("put", filepath)

    def put_text(self, obj: str, filepath: PathLike, encoding: str = "utf-8") -> None:
        self._read_only("put_text", filepath)

    def remove(self, filepath: PathLike) -> None:
        self._read_only("remove", filepath)

    def rmtree(self, dir_path: PathLike) -> None:
        self._read_only("rmtree", dir_path)

    def copyfile(self, src: PathLike, dst: PathLike) -> str:
        self._read_only("copyfile to", dst)

    def copytree(self, src: PathLike, dst: PathLike) -> str:
        self._read_only("copytree to", dst)

    def copyfile_from_local(self, src: PathLike, dst: PathLike) -> str:
        self._read_only("copyfile_from_local to", dst)

    def copytree_from_local(self, src: PathLike, dst: PathLike) -> str:
        self._read_only("copytree_from_local to", dst)
