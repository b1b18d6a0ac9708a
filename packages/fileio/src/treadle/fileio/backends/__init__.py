"""Storage backends: where files live, and which backend serves which path."""

from .base import BaseStorageBackend
from .fsspec_backend import FsspecBackend
from .http_backend import HTTPBackend
from .lmdb_backend import LmdbBackend
from .local_backend import HardDiskBackend, LocalBackend
from .registry_utils import backends, get_file_backend, prefix_to_backends, register_backend
from .s3_backend import S3Backend
from .unsupported import MemcachedBackend, PetrelBackend

__all__ = [
    "BaseStorageBackend",
    "FsspecBackend",
    "HTTPBackend",
    "HardDiskBackend",
    "LmdbBackend",
    "LocalBackend",
    "MemcachedBackend",
    "PetrelBackend",
    "S3Backend",
    "backends",
    "get_file_backend",
    "prefix_to_backends",
    "register_backend",
]
