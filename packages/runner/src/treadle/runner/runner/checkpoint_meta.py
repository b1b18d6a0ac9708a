"""The ``meta`` of a checkpoint, read without loading its tensors, and the check that a named
checkpoint is one a run can resume from.

A run resuming a named checkpoint reads its ``meta`` twice before the resume itself: once when
the Runner is built, to refuse a missing file or a file that is no checkpoint before anything
is written to work_dir, and once to compare it with the newer checkpoints of work_dir. Local
torch files are memory-mapped (``torch.load(mmap=True)``), so this costs a read of the pickle,
not of the weights.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import torch

from treadle.runner.checkpoint.formats import read_checkpoint_file
from treadle.runner.checkpoint.sharded_layout import is_sharded_checkpoint
from treadle.runner.strategies.deepspeed_checkpoint_io import is_deepspeed_checkpoint

from .checkpoint_loading import read_runner_checkpoint
from .mmengine_migration import mmengine_safe_globals

_SHOWN_KEYS = 5
_HEAD_BYTES = 16
_ZIP_MAGIC = b"PK\x03\x04"
_PICKLE_PROTOCOL = b"\x80"


def is_remote(path: str) -> bool:
    """Whether ``path`` is on a treadle.fileio backend other than the local disk."""
    return "://" in path or "::" in path


def _load_local(path: str) -> Any:
    with mmengine_safe_globals():
        try:
            return torch.load(path, map_location="cpu", weights_only=True, mmap=True)
        except Exception:  # not a zip archive: a legacy torch file, safetensors or no checkpoint
            return read_checkpoint_file(path, map_location="cpu")


def _kind_of_file(path: str) -> str:
    with open(path, "rb") as file:
        head = file.read(_HEAD_BYTES)
    if head.startswith(_ZIP_MAGIC):
        return "a zip archive, as torch.save writes, that did not load"
    if head.startswith(_PICKLE_PROTOCOL):
        return "a pickle, as a legacy torch.save writes, that did not load"
    return "neither a torch.save file nor a safetensors file, by its first bytes"


def _what_it_holds(checkpoint: Any) -> str:
    if not isinstance(checkpoint, Mapping):
        return f"a {type(checkpoint).__name__}"
    keys = [repr(key) for key in list(checkpoint)[:_SHOWN_KEYS]]
    more = ", ..." if len(checkpoint) > _SHOWN_KEYS else ""
    return f"the keys {', '.join(keys)}{more}" if keys else "nothing"


def _not_resumable(path: str, checkpoint: Any) -> ValueError:
    return ValueError(
        f"cannot resume from {path}: it is not a checkpoint a runner can resume from (it "
        f"holds {_what_it_holds(checkpoint)}, and no 'meta' with epoch and iter; a file of "
        f"weights only?). To start a new run from its weights, use load_from={path!r} with "
        "resume=False (treadle train: --cfg-options load_from=PATH, without --resume)"
    )


def read_checkpoint_meta(path: str, backend_args: dict | None = None) -> Mapping[str, Any] | None:
    """The ``meta`` of the runner checkpoint at ``path``, or None where it is not read
    cheaply (a sharded checkpoint directory). Raises FileNotFoundError for a missing local
    path and ValueError, naming ``path``, for a file that is no checkpoint or holds no
    training state. ``backend_args`` describe the store of a remote checkpoint.

    Example:
        >>> read_checkpoint_meta('work_dirs/toy/epoch_3.pth')['epoch']
        3
    """
    path = os.fspath(path)
    if is_remote(path) and is_sharded_checkpoint(path, backend_args):
        # Reading its meta means reading it whole, with collectives on every rank.
        return None
    if is_remote(path):
        checkpoint = read_runner_checkpoint(path, backend_args=backend_args)
    elif os.path.isdir(path):
        # DeepSpeed's directories hold the runner's meta in the engine's client state.
        if is_sharded_checkpoint(path) or is_deepspeed_checkpoint(path):
            return None
        raise ValueError(
            f"cannot resume from {path}: it is a directory but not a complete sharded "
            "checkpoint (it has no .metadata file)"
        )
    elif not os.path.exists(path):
        raise FileNotFoundError(
            f"cannot resume from {path}: no such checkpoint file or directory (resolved to "
            f"{os.path.abspath(path)})"
        )
    else:
        try:
            checkpoint = _load_local(path)
        except Exception as err:
            first_line = (str(err).splitlines() or [""])[0]
            raise ValueError(
                f"cannot resume from {path}: it is not a checkpoint that treadle can read "
                f"({_kind_of_file(path)}; {type(err).__name__}: {first_line})"
            ) from err
    meta = checkpoint.get("meta") if isinstance(checkpoint, Mapping) else None
    if not isinstance(meta, Mapping) or "epoch" not in meta or "iter" not in meta:
        raise _not_resumable(path, checkpoint)
    return meta
