"""CheckpointIO: how a strategy writes and reads a whole checkpoint dict.

The Runner builds the checkpoint (model and optimizer states taken from the strategy, plus the
meta, message hub, loop position and generators) and hands it to ``strategy.checkpoint_io``;
strategies that shard their state (FSDP2, DeepSpeed) use another CheckpointIO. Every rank calls
``save`` and ``load`` (they may be collectives); ``wait`` returns once writes started with
``async_save=True`` are finished.

Asynchronous saves: the state is copied to host memory before ``save`` returns, and a background
thread writes it, so training goes on meanwhile. Only one save is in flight: a new ``save``
first waits for the previous one.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Mapping
from typing import Any

import torch

from treadle import dist
from treadle.runner.checkpoint import _load_checkpoint, save_checkpoint, tensors_to_cpu
from treadle.runner.checkpoint.sharded import (
    PendingSave,
    load_sharded_checkpoint,
    save_sharded_checkpoint,
)
from treadle.runner.checkpoint.sharded_layout import is_sharded_checkpoint

from .fsdp_optim_keys import rekey_optimizer_state


class CheckpointIO:
    """One file per checkpoint, written by rank 0 (temporary name, then rename); reads a
    sharded checkpoint directory too, whole.

    Example:
        >>> io = CheckpointIO()
        >>> io.save({'state_dict': {}}, 'work_dirs/epoch_1.pth')  # doctest: +SKIP
        >>> io.save({'state_dict': {}}, 'work_dirs/epoch_2.pth', async_save=True)  # doctest: +SKIP
        >>> io.wait()  # doctest: +SKIP
        >>> io.load('work_dirs/epoch_1.pth')['state_dict']  # doctest: +SKIP
        {}
    """

    def __init__(self) -> None:
        self._pending: Any = None
        self._executor: concurrent.futures.ThreadPoolExecutor | None = None

    def save(
        self,
        checkpoint: Mapping[str, Any],
        filepath: str,
        *,
        backend_args: dict | None = None,
        async_save: bool = False,
    ) -> None:
        """Write ``checkpoint`` to ``filepath``; called on every rank, rank 0 writes. With
        ``async_save`` a thread writes a host copy of it."""
        self.wait()
        if dist.get_rank() != 0:
            return
        if not async_save:
            save_checkpoint(dict(checkpoint), filepath, backend_args=backend_args)
            return
        # A copy even of CPU tensors: training goes on updating the originals in place.
        snapshot = tensors_to_cpu(dict(checkpoint), copy=True)
        if self._executor is None:
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="treadle-checkpoint"
            )
        future = self._executor.submit(
            save_checkpoint, snapshot, filepath, backend_args=backend_args
        )
        self._pending = PendingSave(future, None)

    def load(
        self,
        filepath: str,
        *,
        map_location: Any = "cpu",
        template: Mapping[str, Any] | None = None,
    ) -> Any:
        """The checkpoint at ``filepath``: a file, or a sharded checkpoint directory read whole
        (its optimizer state, keyed by parameter names, is re-keyed like ``template``'s)."""
        if "://" in str(filepath) or not is_sharded_checkpoint(os.fspath(filepath)):
            return _load_checkpoint(filepath, map_location=map_location)
        checkpoint = load_sharded_checkpoint(filepath)
        if template is not None and "optimizer" in checkpoint and "optimizer" in template:
            checkpoint["optimizer"] = rekey_optimizer_state(
                checkpoint["optimizer"], template["optimizer"]
            )
        return checkpoint

    def wait(self) -> None:
        """Block until the asynchronous save in flight (if any) has finished; raise its error."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.wait()


class ShardedCheckpointIO(CheckpointIO):
    """A sharded checkpoint directory written by every rank with torch.distributed.checkpoint
    (see :mod:`treadle.runner.checkpoint.sharded`); loads under any world size.

    Its collectives run on a gloo group of their own, created on the first save or load (every
    rank saves and loads together), so an asynchronous save can run beside training's
    collectives, whatever their backend.

    Example:
        >>> io = ShardedCheckpointIO()
        >>> state = {'state_dict': get_model_state_dict(model)}  # doctest: +SKIP
        >>> io.save(state, 'work_dirs/epoch_1.pth', async_save=True)  # doctest: +SKIP
        >>> io.load('work_dirs/epoch_1.pth', template=state)  # doctest: +SKIP
    """

    def __init__(self) -> None:
        super().__init__()
        self._group: Any = None

    def process_group(self) -> Any:
        if self._group is None and dist.is_distributed():
            self._group = torch.distributed.new_group(backend="gloo")
        return self._group

    def save(
        self,
        checkpoint: Mapping[str, Any],
        filepath: str,
        *,
        backend_args: dict | None = None,
        async_save: bool = False,
    ) -> None:
        self.wait()
        if backend_args:
            raise ValueError(
                f"sharded checkpoint {filepath}: backend_args {backend_args} cannot be used; "
                "sharded checkpoints go to a local or mounted path"
            )
        self._pending = save_sharded_checkpoint(
            checkpoint, filepath, process_group=self.process_group(), async_save=async_save
        )

    def load(
        self,
        filepath: str,
        *,
        map_location: Any = "cpu",
        template: Mapping[str, Any] | None = None,
    ) -> Any:
        if "://" in str(filepath) or not is_sharded_checkpoint(os.fspath(filepath)):
            if os.path.isdir(os.fspath(filepath)):
                return load_sharded_checkpoint(filepath)  # raises: names what is missing
            return super().load(filepath, map_location=map_location, template=template)
        self.wait()
        return load_sharded_checkpoint(
            filepath, template=template, process_group=self.process_group()
        )
