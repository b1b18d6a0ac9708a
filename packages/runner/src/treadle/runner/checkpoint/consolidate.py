"""consolidate_sharded_checkpoint: a sharded checkpoint directory (torch.distributed.checkpoint,
written by FSDP) as one whole-file checkpoint, in one process without a process group."""

from __future__ import annotations

import os
from typing import Any

from .io import save_checkpoint
from .sharded_layout import METADATA_FILE, is_sharded_checkpoint

_WEIGHTS_KEYS = ("state_dict", "meta")


def consolidate_sharded_checkpoint(
    sharded_dir: str | os.PathLike, out: str | os.PathLike, *, weights_only: bool | None = None
) -> dict[str, Any]:
    """Write the sharded checkpoint ``sharded_dir`` to the file ``out`` (``.pth``: everything,
    or the weights and meta with ``weights_only``; ``.safetensors``: the weights and meta) and
    return what was written. The whole checkpoint is gathered in this process's memory.

    Example:
        >>> consolidate_sharded_checkpoint('work_dirs/fsdp/epoch_3.pth', 'model.safetensors')
        ...     # doctest: +SKIP
    """
    from .sharded import load_sharded_checkpoint

    sharded_dir, out = os.fspath(sharded_dir), os.fspath(out)
    if not os.path.isdir(sharded_dir):
        raise FileNotFoundError(f"no sharded checkpoint directory at {sharded_dir}")
    if not is_sharded_checkpoint(sharded_dir):
        raise FileNotFoundError(
            f"{sharded_dir} is not a complete sharded checkpoint: it has no {METADATA_FILE} (the "
            "file torch.distributed.checkpoint writes last)"
        )
    if os.path.abspath(out) == os.path.abspath(sharded_dir):
        raise ValueError(f"consolidate: the output {out} is the sharded checkpoint itself")
    if weights_only is None:
        weights_only = out.endswith(".safetensors")
    checkpoint = load_sharded_checkpoint(sharded_dir)
    if weights_only:
        checkpoint = {key: checkpoint[key] for key in _WEIGHTS_KEYS if key in checkpoint}
    save_checkpoint(checkpoint, out)
    return checkpoint
