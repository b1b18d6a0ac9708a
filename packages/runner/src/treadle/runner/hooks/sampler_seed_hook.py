"""``DistSamplerSeedHook``: gives the train sampler the epoch, so each epoch is shuffled anew."""

from __future__ import annotations

from typing import Any

from ..registry import HOOKS
from .hook import Hook


@HOOKS.register_module()
class DistSamplerSeedHook(Hook):
    """Calls ``set_epoch(runner.epoch)`` on the train loader's sampler (or its batch sampler's
    sampler) before each training epoch: samplers seeded by epoch then shuffle differently each
    epoch, and the same way on every rank.

    Example:
        >>> runner_cfg = dict(default_hooks=dict(sampler_seed=dict(type='DistSamplerSeedHook')))
    """

    priority = "NORMAL"

    def before_train_epoch(self, runner: Any) -> None:
        dataloader = runner.train_loop.dataloader
        sampler = getattr(dataloader, "sampler", None)
        if not hasattr(sampler, "set_epoch"):
            # A DataLoader built with a batch_sampler has a plain SequentialSampler as
            # `sampler`; the one that shuffles sits inside the batch sampler.
            sampler = getattr(getattr(dataloader, "batch_sampler", None), "sampler", None)
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(runner.epoch)
