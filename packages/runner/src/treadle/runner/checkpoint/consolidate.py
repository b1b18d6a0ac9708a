"""consolidate_sharded_checkpoint: a sharded checkpoint directory (torch.distributed.checkpoint,
written by FSDP) as one whole-file checkpoint, in one process without a process group."""

from __future__ import annotations

import os
from typing import Any

from .io import save_checkpoint
from .sharded_layout import METADATA_FILE, is_sharded_checkpoint
from .store_paths import same_location, store_args

_WEIGHTS_KEYS = ("state_dict", "meta")


def _check_source(sharded_dir: str, backend_args: dict | None) -> None:
    if "://" in sharded_dir:
        if not is_sharded_checkpoint(sharded_dir, backend_args):
            hint = "" if backend_args else " (a store other than the default one: backend_args)"
            raise FileNotFoundError(
                f"no complete sharded checkpoint at {sharded_dir}{hint}: it has no "
                f"{METADATA_FILE} (the file torch.distributed.checkpoint writes last)"
            )
        return
    if not os.path.isdir(sharded_dir):
        raise FileNotFoundError(f"no sharded checkpoint directory at {sharded_dir}")
    if not is_sharded_checkpoint(sharded_dir):
        raise FileNotFoundError(
            f"{sharded_dir} is not a complete sharded checkpoint: it has no {METADATA_FILE} (the "
            "file torch.distributed.checkpoint writes last)"
        )


def consolidate_sharded_checkpoint(
    sharded_dir: str | os.PathLike,
    out: str | os.PathLike,
    *,
    weights_only: bool | None = None,
    backend_args: dict | None = None,
) -> dict[str, Any]:
    """Write the sharded checkpoint ``sharded_dir`` to the file ``out`` (``.pth``: everything,
    or the weights and meta with ``weights_only``; ``.safetensors``: the weights and meta) and
    return what was written. The whole checkpoint is gathered in this process's memory.
    ``backend_args`` (as given to CheckpointHook: endpoint, credentials...) describe the store
    of whichever of ``sharded_dir`` and ``out`` is a URL (``s3://...``); a local path does not
    use them.

    Example:
        >>> consolidate_sharded_checkpoint('work_dirs/fsdp/epoch_3.pth', 'model.safetensors')
        ...     # doctest: +SKIP
        >>> consolidate_sharded_checkpoint(
        ...     's3://bucket/fsdp/epoch_3.pth', 's3://bucket/fsdp/model.pth',
        ...     backend_args=dict(endpoint_url='http://127.0.0.1:9000'))  # doctest: +SKIP
    """
    from .sharded import load_sharded_checkpoint

    sharded_dir, out = os.fspath(sharded_dir), os.fspath(out)
    _check_source(sharded_dir, store_args(sharded_dir, backend_args))
    if same_location(out, sharded_dir):
        raise ValueError(f"consolidate: the output {out} is the sharded checkpoint itself")
    if weights_only is None:
        weights_only = out.endswith(".safetensors")
    checkpoint = load_sharded_checkpoint(
        sharded_dir, backend_args=store_args(sharded_dir, backend_args)
    )
    if weights_only:
        checkpoint = {key: checkpoint[key] for key in _WEIGHTS_KEYS if key in checkpoint}
    save_checkpoint(checkpoint, out, backend_args=store_args(out, backend_args))
    return checkpoint
