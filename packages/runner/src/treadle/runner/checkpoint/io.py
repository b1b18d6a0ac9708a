"""save_checkpoint: one checkpoint file, written whole or not at all, on any storage."""

from __future__ import annotations

import logging
import os

from treadle import fileio
from treadle.fileio import LocalBackend
from treadle.logging import print_log

from .formats import checkpoint_bytes, format_for_name, write_checkpoint_file
from .remote_integrity import forget_verified_copies, put_with_digest


def merge_client_args(file_client_args: dict | None, backend_args: dict | None) -> dict | None:
    """MMEngine's deprecated ``file_client_args``: warned about, refused beside ``backend_args``,
    else taken as the backend arguments (the checkpoint functions and CheckpointHook share it)."""
    if file_client_args is None:
        return backend_args
    print_log(
        '"file_client_args" will be deprecated in future. Please use "backend_args" instead',
        logger="current",
        level=logging.WARNING,
    )
    if backend_args is not None:
        raise ValueError('"file_client_args" and "backend_args" cannot be set at the same time.')
    return file_client_args


def save_checkpoint(
    checkpoint: dict,
    filename: str | os.PathLike,
    file_client_args: dict | None = None,
    backend_args: dict | None = None,
) -> None:
    """Save ``checkpoint`` to ``filename``: a local path or any treadle.fileio URI.

    A name ending in ``.safetensors`` is written with safetensors (the tensors of
    ``checkpoint['state_dict']`` and its ``meta``, see
    :mod:`treadle.runner.checkpoint.safetensors_format`); any other name with ``torch.save``.
    A local file is written under a temporary name next to ``filename`` and renamed, so a
    crash or an error leaves the previous file (or none), never a part of one; object stores
    replace whole objects, and get a digest beside them (``epoch_3.pth.digest``, see
    :mod:`.remote_integrity`) that a resume checks the object against.

    Example:
        >>> save_checkpoint({'state_dict': model.state_dict(), 'meta': {'epoch': 3}},
        ...                 'work_dirs/epoch_3.pth')
        >>> save_checkpoint({'state_dict': model.state_dict()}, 'memory://run/model.safetensors')
    """
    backend_args = merge_client_args(file_client_args, backend_args)
    filename = os.fspath(filename)
    if filename.startswith("pavi://"):
        raise NotImplementedError(
            f"save_checkpoint({filename!r}): pavi:// (OpenMMLab's internal model cloud) is not "
            "supported by treadle; save to a local path or a treadle.fileio URI (s3://, ...)"
        )
    fmt = format_for_name(filename)
    backend = fileio.get_file_backend(filename, backend_args=backend_args, enable_singleton=True)
    if isinstance(backend, LocalBackend):
        # Streamed to the temporary file: no second copy of the checkpoint in memory.
        directory = os.path.dirname(filename)
        if directory:
            os.makedirs(directory, exist_ok=True)
        with fileio.atomic_temporary_path(filename, fsync=backend.fsync) as temporary:
            write_checkpoint_file(checkpoint, temporary, fmt, filename)
    else:
        # A run that saves is done resuming: the copies kept for its load can go.
        forget_verified_copies()
        put_with_digest(backend, checkpoint_bytes(checkpoint, fmt, filename), filename)
