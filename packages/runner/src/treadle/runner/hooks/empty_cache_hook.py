"""``EmptyCacheHook``: hands the accelerator's cached, unused memory back to the driver."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from ..registry import HOOKS
from .hook import DATA_BATCH, Hook


def empty_accelerator_cache() -> None:
    """Release the caching allocator's unused blocks of this process's accelerator (CUDA, ROCm,
    MUSA, NPU, XPU, MPS...); nothing happens on a CPU-only machine."""
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and hasattr(accelerator, "empty_cache"):
        if accelerator.is_available():
            accelerator.empty_cache()
    elif torch.cuda.is_available():
        torch.cuda.empty_cache()


@HOOKS.register_module()
class EmptyCacheHook(Hook):
    """Empties the accelerator's memory cache after each epoch (by default), and optionally
    before each epoch and after each iteration, of every loop. Useful when another process
    shares the device, or to make the memory a run holds visible in ``nvidia-smi``.

    Args:
        before_epoch: empty before each epoch.
        after_epoch: empty after each epoch.
        after_iter: empty after each iteration (slow: the allocator must ask the driver again).

    Example:
        >>> runner_cfg = dict(custom_hooks=[dict(type='EmptyCacheHook', after_iter=False)])
    """

    priority = "NORMAL"

    def __init__(
        self, before_epoch: bool = False, after_epoch: bool = True, after_iter: bool = False
    ) -> None:
        self._do_before_epoch = before_epoch
        self._do_after_epoch = after_epoch
        self._do_after_iter = after_iter

    def _before_epoch(self, runner: Any, mode: str = "train") -> None:
        if self._do_before_epoch:
            empty_accelerator_cache()

    def _after_epoch(self, runner: Any, mode: str = "train") -> None:
        if self._do_after_epoch:
            empty_accelerator_cache()

    def next_train_iter(self, runner: Any, iteration: int, batch_idx: int) -> int | None:
        """Every iteration with ``after_iter=True``, else none."""
        return iteration if self._do_after_iter else None

    def _after_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | Sequence | None = None,
        mode: str = "train",
    ) -> None:
        if self._do_after_iter:
            empty_accelerator_cache()
