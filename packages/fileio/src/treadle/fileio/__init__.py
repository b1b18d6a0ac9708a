"""treadle.fileio: one file API over local disks, S3 and every fsspec filesystem.

The API follows MMEngine 0.10's ``mmengine.fileio``: ``from mmengine import fileio`` becomes
``from treadle import fileio``. Importing it imports neither fsspec nor boto3; they are
imported when a path first needs them.
"""

from .atomic import atomic_temporary_path, atomic_write
from .backends import (
    BaseStorageBackend,
    FsspecBackend,
    HardDiskBackend,
    HTTPBackend,
    LmdbBackend,
    LocalBackend,
    MemcachedBackend,
    PetrelBackend,
    S3Backend,
    get_file_backend,
    register_backend,
)
from .errors import (
    FileioTypeError,
    StorageError,
    UnknownBackendError,
    UnsupportedBackendError,
)
from .file_client import FileClient
from .handlers import (
    BaseFileHandler,
    JsonHandler,
    PickleHandler,
    YamlHandler,
    file_handlers,
    register_handler,
)
from .io import (
    copy_if_symlink_fails,
    copyfile,
    copyfile_from_local,
    copyfile_to_local,
    copytree,
    copytree_from_local,
    copytree_to_local,
    exists,
    generate_presigned_url,
    get,
    get_local_path,
    get_text,
    isdir,
    isfile,
    join_path,
    list_dir_or_file,
    put,
    put_text,
    remove,
    rmtree,
)
from .parse import dict_from_file, list_from_file
from .serialization import dump, load

__version__ = "0.1.1"

__all__ = [
    "BaseFileHandler",
    "BaseStorageBackend",
    "FileClient",
    "FileioTypeError",
    "FsspecBackend",
    "HTTPBackend",
    "HardDiskBackend",
    "JsonHandler",
    "LmdbBackend",
    "LocalBackend",
    "MemcachedBackend",
    "PetrelBackend",
    "PickleHandler",
    "S3Backend",
    "StorageError",
    "UnknownBackendError",
    "UnsupportedBackendError",
    "YamlHandler",
    "__version__",
    "atomic_temporary_path",
    "atomic_write",
    "copy_if_symlink_fails",
    "copyfile",
    "copyfile_from_local",
    "copyfile_to_local",
    "copytree",
    "copytree_from_local",
    "copytree_to_local",
    "dict_from_file",
    "dump",
    "exists",
    "file_handlers",
    "generate_presigned_url",
    "get",
    "get_file_backend",
    "get_local_path",
    "get_text",
    "isdir",
    "isfile",
    "join_path",
    "list_dir_or_file",
    "list_from_file",
    "load",
    "put",
    "put_text",
    "register_backend",
    "register_handler",
    "remove",
    "rmtree",
]
