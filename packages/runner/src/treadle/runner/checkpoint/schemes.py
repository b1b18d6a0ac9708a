"""The built-in checkpoint schemes: local paths and treadle.fileio URIs, ``s3://``,
``http(s)://`` downloads, and ``pkg::`` files shipped inside installed Python packages.

The model-zoo schemes (``torchvision://``, ``open-mmlab://``, ...) are in model_zoos.py.
"""

from __future__ import annotations

import errno
import importlib.resources
import os
from typing import Any

from treadle import fileio
from treadle.fileio import UnknownBackendError

from .download import download_once_per_machine
from .formats import read_checkpoint_file
from .loader import CheckpointLoader
from .remote_integrity import verified_local_copy

PACKAGE_PREFIX = "pkg::"


@CheckpointLoader.register_scheme(prefixes="")
def load_from_local(
    filename: str,
    map_location: Any = None,
    weights_only: bool = True,
    backend_args: dict | None = None,
) -> Any:
    """Load a local checkpoint file (``~`` expanded); a path with a URI prefix that no other
    scheme claims (``memory://``, ``gs://``, ...) goes to :func:`load_from_fileio`, with
    ``backend_args`` (a local path is read as it is)."""
    if "://" in filename:
        return load_from_fileio(filename, map_location, weights_only, backend_args)
    path = os.path.expanduser(filename)
    if os.path.isdir(path):
        raise IsADirectoryError(
            errno.EISDIR,
            "Is a directory, not a checkpoint file (load_checkpoint reads one .pth or "
            ".safetensors file)",
            filename,
        )
    if not os.path.isfile(path):
        raise FileNotFoundError(
            errno.ENOENT, "No such file or directory (checkpoint, local backend)", filename
        )
    return read_checkpoint_file(path, map_location, weights_only, filename)


def load_from_fileio(
    filename: str,
    map_location: Any = None,
    weights_only: bool = True,
    backend_args: dict | None = None,
) -> Any:
    """Load a checkpoint from any treadle.fileio backend, the one ``backend_args`` describe
    (endpoint, credentials...) or else the default of its prefix (a local copy for the time of
    the load where the storage is remote, checked first: see :mod:`.remote_integrity`)."""
    try:
        backend = fileio.get_file_backend(
            filename, backend_args=backend_args, enable_singleton=True
        )
    except UnknownBackendError as err:
        raise UnknownBackendError(
            f"cannot load the checkpoint {filename!r}: {err}. CheckpointLoader's own schemes "
            f"are {', '.join(repr(p) for p in CheckpointLoader._schemes if p)}"
        ) from None
    if isinstance(backend, fileio.LocalBackend):
        with backend.get_local_path(filename) as local_path:
            return read_checkpoint_file(local_path, map_location, weights_only, filename)
    # Checked against the digest written beside it (or as a local file without one).
    with verified_local_copy(filename, backend_args) as local_path:
        return read_checkpoint_file(local_path, map_location, weights_only, filename)


@CheckpointLoader.register_scheme(prefixes=r"(\S+\:)?s3://")
def load_from_ceph(
    filename: str,
    map_location: Any = None,
    backend: str | None = "petrel",
    weights_only: bool = True,
    backend_args: dict | None = None,
) -> Any:
    """Load a checkpoint from S3 storage (``s3://bucket/key``, or ``cluster:s3://...``): Ceph's
    S3 gateway, AWS, MinIO... MMEngine's name for this scheme, also ``load_from_s3``.

    treadle reads it through treadle.fileio's S3 backend (boto3), configured by
    ``backend_args`` (endpoint, credentials) or else by the environment. ``backend`` is
    MMEngine's argument: its default ``'petrel'`` (SenseTime's client, which treadle does not
    have, for the same ``s3://`` paths), ``'s3'`` and None all mean that S3 backend; another
    name picks that treadle.fileio backend.

    Example:
        >>> checkpoint = load_from_ceph(  # doctest: +SKIP
        ...     's3://bucket/epoch_3.pth', backend_args=dict(endpoint_url='http://ceph:7480'))
    """
    if backend not in (None, "petrel", "s3"):
        backend_args = {**(backend_args or {}), "backend": backend}
    return load_from_fileio(filename, map_location, weights_only, backend_args)


#: treadle's name for :func:`load_from_ceph`, which reads any S3 storage.
load_from_s3 = load_from_ceph


@CheckpointLoader.register_scheme(prefixes=("http://", "https://"))
def load_from_http(
    filename: str,
    map_location: Any = None,
    model_dir: str | None = None,
    progress: bool = False,
    weights_only: bool = True,
    check_hash: bool = False,
) -> Any:
    """Download ``filename`` into ``model_dir`` (torch.hub's checkpoint cache by default)
    unless already there, once per machine, and load it."""
    path = download_once_per_machine(filename, model_dir, check_hash, progress)
    return read_checkpoint_file(path, map_location, weights_only, filename)


@CheckpointLoader.register_scheme(prefixes=PACKAGE_PREFIX)
def load_from_package(filename: str, map_location: Any = None, weights_only: bool = True) -> Any:
    """Load a checkpoint shipped inside an installed Python package:
    ``pkg::package.subpackage/relative/path.pth``."""
    package, _, relative = filename[len(PACKAGE_PREFIX) :].partition("/")
    if not package or not relative:
        raise ValueError(
            f"{filename!r}: a pkg:: checkpoint is written "
            "'pkg::package.subpackage/relative/path.pth'"
        )
    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError as err:
        raise ModuleNotFoundError(
            f"{filename!r} names the Python package {package!r}, which is not installed ({err})",
            name=package,
        ) from None
    except TypeError as err:  # a module, not a package, before Python 3.12
        raise ValueError(f"{filename!r}: {package!r} is not a package ({err})") from None
    resource = root.joinpath(*relative.split("/"))
    if not resource.is_file():
        raise FileNotFoundError(
            errno.ENOENT,
            f"No such file or directory (in the installed package {package!r})",
            filename,
        )
    with importlib.resources.as_file(resource) as path:
        return read_checkpoint_file(os.fspath(path), map_location, weights_only, filename)
