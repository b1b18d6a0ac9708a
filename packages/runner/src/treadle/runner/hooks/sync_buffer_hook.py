"""``SyncBuffersHook``: averages the model's buffers over the ranks before evaluating."""

from __future__ import annotations

from typing import Any

from treadle.dist import all_reduce_params, is_distributed

from ..registry import HOOKS
from .hook import Hook


@HOOKS.register_module()
class SyncBuffersHook(Hook):
    """In distributed training, replaces every buffer of the model (BatchNorm's running
    statistics...) with its mean over the ranks after each training epoch, and before a
    validation that does not follow one, so every rank evaluates the same model. It does
    nothing in a single process.

    Example:
        >>> runner_cfg = dict(custom_hooks=[dict(type='SyncBuffersHook')])
    """

    priority = "NORMAL"

    def __init__(self) -> None:
        self.distributed = is_distributed()
        # Set when the buffers were just averaged at the end of a training epoch, so the
        # validation that follows does not average them again.
        self.called_in_train = False

    def _sync(self, runner: Any) -> None:
        # Integer buffers (num_batches_tracked) are the same on every rank; averaging them
        # would need a float round trip, so only floating-point ones are reduced.
        buffers = [b for b in runner.model.buffers() if b.is_floating_point()]
        if buffers:
            all_reduce_params(buffers, op="mean")

    def before_val_epoch(self, runner: Any) -> None:
        if self.distributed:
            if not self.called_in_train:
                self._sync(runner)
            self.called_in_train = False

    def after_train_epoch(self, runner: Any) -> None:
        if self.distributed:
            self._sync(runner)
            self.called_in_train = True
