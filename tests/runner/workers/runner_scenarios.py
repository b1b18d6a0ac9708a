"""Scenarios of the Runner in a 2-process gloo group (run by tests/runner/test_runner_distributed.py
through tests/support/gloo_group.py): DDP on the CPU, one timestamp and one seed for all ranks,
checkpoints from rank 0."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

import torch
from runner_toy_model import toy_cfg

from treadle.runner.runner import Runner

GLOO = dict(dist_cfg=dict(backend="gloo"))


def _runner(context, name, **overrides):
    work_dir = os.path.join(context["out_dir"], name)
    overrides.setdefault("experiment_name", name)
    return Runner(**toy_cfg(work_dir, launcher="pytorch", env_cfg=GLOO, **overrides))


def scenario_train(context):
    seen = []

    from treadle.runner.hooks import Hook

    class Batches(Hook):
        def before_train_iter(self, runner, batch_idx, data_batch=None):
            seen.append([round(float(x[0]), 4) for x in data_batch["inputs"]])

    runner = _runner(context, "train", randomness=dict(seed=None), custom_hooks=[Batches()])
    runner.train()
    weights = {k: v.tolist() for k, v in runner.model.module.state_dict().items()}
    return dict(
        wrapper=type(runner.model).__name__,
        distributed=runner.distributed,
        rank=runner.rank,
        world_size=runner.world_size,
        timestamp=runner.timestamp,
        seed=runner.seed,
        weights=weights,
        batches=seen,
        iters=runner.iter,
        metrics=runner.val(),
    )


def scenario_diff_rank_seed(context):
    runner = _runner(context, "diff", randomness=dict(seed=10, diff_rank_seed=True))
    return dict(seed=runner.seed, draw=torch.rand(1).item())
