"""PetrelBackend and MemcachedBackend: names MMEngine exports whose storage clients (SenseTime's
petrel_client, the in-house memcached client ``mc``) are not publicly available.

They import and register, so that configs and code naming them load; making one raises
UnsupportedBackendError (a NotImplementedError, and an ImportError as MMEngine raises without
the client) that says why and what to use instead.
"""

from __future__ import annotations

from ..errors import UnsupportedBackendError
from .base import BaseStorageBackend, PathLike

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


class UnsupportedBackend(BaseStorageBackend):
    """A backend treadle.fileio names but cannot serve; ``advice`` says what to use instead."""

    client = ""
    advice = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._refuse()

    def _refuse(self) -> NoReturn:
        raise UnsupportedBackendError(
            f"{self.name} is not supported by treadle.fileio: it needs {self.client}, which is "
            f"not publicly available. {self.advice}"
        )

    def get(self, filepath: PathLike) -> bytes:
        self._refuse()

    def get_text(self, filepath: PathLike, encoding: str = "utf-8") -> str:
        self._refuse()


class PetrelBackend(UnsupportedBackend):
    """MMEngine's backend for SenseTime's Petrel OSS (``petrel://`` paths); not supported.

    Example:
        >>> PetrelBackend()
        Traceback (most recent call last):
        UnsupportedBackendError: PetrelBackend is not supported by treadle.fileio: ...
    """

    client = "SenseTime's petrel_client SDK"
    advice = (
        "Petrel buckets speak the S3 protocol: use s3:// paths (S3Backend), with "
        "backend_args={'backend': 's3', 'endpoint_url': <your Petrel/Ceph endpoint>} and "
        "path_mapping's replacements applied to your paths, or register your own backend "
        "with treadle.fileio.register_backend."
    )

    def __init__(
        self,
        path_mapping: dict[str, Any] | None = None,
        enable_mc: bool = True,
        conf_path: str | None = None,
    ) -> None:
        self._refuse()


class MemcachedBackend(UnsupportedBackend):
    """MMEngine's backend for a memcached cluster through the ``mc`` client; not supported.

    Example:
        >>> MemcachedBackend('servers.conf', 'client.conf')
        Traceback (most recent call last):
        UnsupportedBackendError: MemcachedBackend is not supported by treadle.fileio: ...
    """

    client = "the in-house memcached client 'mc' (pyMemcached)"
    advice = (
        "For fast reads of many small files pack them into an LMDB database and use "
        "LmdbBackend (backend_args={'backend': 'lmdb', 'db_path': ...}), or read them from a "
        "local disk; or register your own backend with treadle.fileio.register_backend."
    )

    def __init__(self, server_list_cfg: str, client_cfg: str, sys_path: str | None = None) -> None:
        self._refuse()
