"""What a sharded checkpoint looks like on disk, known without importing
torch.distributed.checkpoint.

A sharded checkpoint is a directory (named like a checkpoint file, ``epoch_3.pth``, as MMEngine
names its FSDP checkpoint folders) written by torch.distributed.checkpoint: one ``.distcp`` file
per rank and a ``.metadata`` file. The writers work in a hidden temporary directory beside it,
``.epoch_3.pth.sharded-tmp``, which becomes ``epoch_3.pth`` once ``.metadata`` is written: a
directory with the checkpoint's name is complete, and one without ``.metadata`` (copied by hand,
cut short) is never taken for a checkpoint. On an object store (``s3://``), where nothing is
renamed, the ranks write under the checkpoint's name and ``.metadata`` (written last) is the
completion marker.
"""

from __future__ import annotations

import os

METADATA_FILE = ".metadata"
TEMPORARY_SUFFIX = ".sharded-tmp"
REPLACED_SUFFIX = ".sharded-old"


def is_sharded_checkpoint(path: str | os.PathLike, backend_args: dict | None = None) -> bool:
    """Whether ``path`` is a complete sharded checkpoint directory. ``backend_args`` (as given
    to CheckpointHook) describe the store of a URL ``path``: its endpoint, credentials...

    Example:
        >>> is_sharded_checkpoint('work_dirs/fsdp/epoch_3.pth')
        True
    """
    path = os.fspath(path)
    if "://" in path:
        return _on_a_store(path, backend_args)
    return os.path.isfile(os.path.join(path, METADATA_FILE))


def _on_a_store(path: str, backend_args: dict | None) -> bool:
    """Whether the URL ``path`` is a complete sharded checkpoint on S3 or another
    treadle.fileio store (see :mod:`.sharded_storage`); never for downloads (``http(s)://``)
    and model-zoo names, which are files."""
    from treadle import fileio

    if path.startswith(("http://", "https://")):
        return False
    try:
        backend = fileio.get_file_backend(path, backend_args=backend_args, enable_singleton=True)
        return backend.isfile(backend.join_path(path, METADATA_FILE))
    except (fileio.UnknownBackendError, NotImplementedError):
        return False


def temporary_path(path: str) -> str:
    """Where the ranks write ``path`` before it is complete (hidden, same folder)."""
    folder, name = os.path.split(os.path.normpath(path))
    return os.path.join(folder, f".{name}{TEMPORARY_SUFFIX}")


def replaced_path(path: str) -> str:
    """Where an older checkpoint of the same name goes while the new one takes its place."""
    folder, name = os.path.split(os.path.normpath(path))
    return os.path.join(folder, f".{name}{REPLACED_SUFFIX}")
