"""Scenarios of SyncBuffersHook in a real gloo group (run by gloo_rank_runner.py through
test_hooks_misc.py): each returns what this rank saw."""

from types import SimpleNamespace

import torch
from torch import nn

import treadle.dist as dist
from treadle.runner.hooks import SyncBuffersHook


def _runner():
    model = nn.BatchNorm1d(2)
    rank = dist.get_rank()
    with torch.no_grad():
        model.running_mean.fill_(float(rank))
        model.running_var.fill_(float(rank + 1))
    model.num_batches_tracked.fill_(5)
    return SimpleNamespace(model=model)


def scenario_after_train_epoch(context):
    """The buffers after a training epoch, and after the validation that follows."""
    runner = _runner()
    hook = SyncBuffersHook()
    hook.after_train_epoch(runner)
    after_epoch = runner.model.running_mean.tolist(), runner.model.running_var.tolist()
    # The validation right after reuses the synced buffers: change one to see it is not
    # averaged again.
    runner.model.running_mean.fill_(float(10 * dist.get_rank()))
    hook.before_val_epoch(runner)
    return after_epoch, runner.model.running_mean.tolist(), int(runner.model.num_batches_tracked)


def scenario_val_alone(context):
    """The buffers after a validation that follows no training epoch."""
    runner = _runner()
    SyncBuffersHook().before_val_epoch(runner)
    return runner.model.running_mean.tolist()
