"""Scenarios of tests/runner/test_loops_val_loss_distributed.py, run on each rank of a 2-process
gloo group: validation with compute_loss=True on uneven shards (DefaultSampler without
round_up: 7 samples are 4 on rank 0 and 3 on rank 1, in batches of 2), with several loss
terms, and the reduction with a rank that saw no batch and a term only one rank reports."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

import torch
from runner_toy_model import toy_cfg
from valloss_toys import val_loader, whole_set_mse

from treadle.runner.loops.eval_loss_mean import EvalLossMean
from treadle.runner.model import unwrap_model
from treadle.runner.runner import Runner


def _val(context, name, length, model="RunnerToyModel"):
    cfg = toy_cfg(
        os.path.join(context["out_dir"], name),
        experiment_name=f"{name}_{context['rank']}",
        model=dict(type=model),
        train_dataloader=None,
        train_cfg=None,
        optim_wrapper=None,
        param_scheduler=None,
        test_dataloader=None,
        test_evaluator=None,
        test_cfg=None,
        val_dataloader=val_loader(length=length, batch_size=2),
        val_cfg=dict(compute_loss=True),
        launcher="pytorch",
    )
    runner = Runner(**cfg)
    metrics = runner.val()
    inner = unwrap_model(runner.model)
    return dict(
        metrics={key: value for key, value in metrics.items() if key.startswith("val/")},
        expected=whole_set_mse(inner, length),
        local_samples=len(runner.val_dataloader.sampler),
        wrapper=type(runner.model).__name__,
    )


def scenario_uneven_shards(context):
    return _val(context, "uneven", 7)


def scenario_a_rank_without_batches_and_a_term_of_one_rank(context):
    # The Runner refuses a rank whose loader is empty, so the reduction is driven directly:
    # rank 0 saw two batches, rank 1 none; then only rank 1 reports loss_x.
    mean = EvalLossMean("val")
    if context["rank"] == 0:
        mean.add({"loss": torch.tensor(1.0)}, 2)
        mean.add({"loss": torch.tensor(4.0)}, 1)
    empty = mean.summary()
    mean.clear()
    mean.add({"loss": torch.tensor(float(context["rank"] + 1))}, 1 + context["rank"])
    if context["rank"] == 1:
        mean.add({"loss_x": torch.tensor(3.0)}, 5)
    mixed = mean.summary()
    return dict(empty=empty, mixed=mixed)


def scenario_several_terms(context):
    return _val(context, "terms", 7, model="ValLossMultiTermModel")
