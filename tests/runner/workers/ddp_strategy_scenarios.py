"""Scenarios of tests/runner/test_strategies_ddp.py, run on each rank of a 2-process gloo group:
DDPStrategy on its own and through FlexibleRunner and the plain Runner. Each rank trains on its
share of the toy data (DefaultSampler without shuffling: rank r takes samples r, r+2, ...), so
that both ranks together see, at each step, the batch one process sees with twice the batch
size; the test compares the weights with that one process."""

import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

import torch
from runner_toy_model import ToyModel, toy_cfg, toy_two_optim_cfg
from torch import nn

from treadle.runner.model import MMDistributedDataParallel
from treadle.runner.runner import FlexibleRunner, Runner
from treadle.runner.strategies import DDPStrategy

# Per rank: batch 3 of 12 samples, 6 per rank, 2 iterations per epoch.
BATCH = 3
EPOCHS = 2


def loader(batch_size=BATCH):
    return dict(
        dataset=dict(type="RunnerToyDataset", length=12),
        sampler=dict(type="DefaultSampler", shuffle=False),
        batch_size=batch_size,
        num_workers=0,
    )


def train_overrides(context, name):
    return dict(
        work_dir=os.path.join(context["out_dir"], name),
        experiment_name=f"{name}_{context['rank']}",
        train_dataloader=loader(),
        train_cfg=dict(by_epoch=True, max_epochs=EPOCHS),
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        test_dataloader=None,
        test_evaluator=None,
        test_cfg=None,
        param_scheduler=None,
        optim_wrapper=dict(type="OptimWrapper", optimizer=dict(type="SGD", lr=0.1)),
        launcher="pytorch",
    )


def buffers_synced(ddp):
    """Whether DDP synchronizes buffers at every forward (torch 2.13 renamed the setting)."""
    return getattr(ddp, "forward_sync_buffers", getattr(ddp, "broadcast_buffers", None))


def weights_of(model):
    inner = model.module if hasattr(model, "module") else model
    return {name: value.tolist() for name, value in inner.state_dict().items()}


def scenario_flexible_runner_ddp(context):
    cfg = toy_cfg(**train_overrides(context, "flexible"))
    runner = FlexibleRunner(strategy=dict(type="DDPStrategy"), **cfg)
    runner.train()
    return dict(
        strategy=type(runner.strategy).__name__,
        wrapper=type(runner.model).__name__,
        broadcast_buffers=buffers_synced(runner.model),
        device_ids=runner.model.device_ids,
        iters=runner.iter,
        weights=weights_of(runner.model),
    )


def scenario_gradient_accumulation_skips_the_sync_between_updates(context):
    overrides = train_overrides(context, "accumulate")
    overrides["optim_wrapper"] = dict(
        type="OptimWrapper", optimizer=dict(type="SGD", lr=0.1), accumulative_counts=2
    )
    runner = FlexibleRunner(strategy=dict(type="DDPStrategy"), **toy_cfg(**overrides))
    synced = []
    original = MMDistributedDataParallel.no_sync

    def counting_no_sync(self):
        synced.append(runner.iter)
        return original(self)

    MMDistributedDataParallel.no_sync = counting_no_sync
    try:
        runner.train()
    finally:
        MMDistributedDataParallel.no_sync = original
    return dict(weights=weights_of(runner.model), no_sync_at=synced)


def scenario_runner_launcher_pytorch(context):
    runner = Runner(**toy_cfg(**train_overrides(context, "plain")))
    runner.train()
    return dict(wrapper=type(runner.model).__name__, weights=weights_of(runner.model))


def scenario_auto_scale_lr_uses_the_world_size(context):
    cfg = toy_cfg(**train_overrides(context, "scale"))
    cfg["train_cfg"] = dict(by_epoch=True, max_epochs=1)
    runner = FlexibleRunner(
        strategy=dict(type="DDPStrategy"),
        auto_scale_lr=dict(enable=True, base_batch_size=BATCH),
        **{key: value for key, value in cfg.items() if key != "auto_scale_lr"},
    )
    runner.train()
    return runner.optim_wrapper.param_groups[0]["lr"]


def scenario_sync_bn_on_the_cpu_is_refused(context):
    try:
        DDPStrategy(sync_bn="torch").prepare(ToyModel(with_bn=True))
    except ValueError as error:
        return str(error)
    return None


def scenario_wrapper_arguments(context):
    strategy = DDPStrategy(
        model_wrapper=dict(find_unused_parameters=True, detect_anomalous_params=True),
    )
    ddp = strategy.prepare(ToyModel(with_bn=True))
    again = strategy.wrap_model(ddp)
    return dict(
        wrapper=type(ddp).__name__,
        norm=type(ddp.module.head.bn).__name__,
        find_unused=ddp.find_unused_parameters,
        detect=ddp.detect_anomalous_params,
        broadcast_buffers=buffers_synced(ddp),
        same=again is ddp,
    )


def scenario_default_wrapper_warns_nothing(context):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        DDPStrategy().prepare(ToyModel(with_bn=True))
    return [str(warning.message) for warning in caught]


def scenario_model_wrapper_given_as_a_class(context):
    strategy = DDPStrategy(model_wrapper=dict(type=nn.parallel.DistributedDataParallel))
    ddp = strategy.prepare(nn.Linear(2, 1))
    return type(ddp).__name__


def scenario_separate_ddp_through_flexible_runner(context):
    overrides = train_overrides(context, "separate")
    overrides.pop("optim_wrapper")
    cfg = toy_two_optim_cfg(**overrides)
    runner = FlexibleRunner(
        strategy=dict(
            type="DDPStrategy", model_wrapper=dict(type="MMSeparateDistributedDataParallel")
        ),
        **cfg,
    )
    runner.train()
    parts = runner.model.module
    return dict(
        wrapper=type(runner.model).__name__,
        parts={name: type(part).__name__ for name, part in parts.named_children()},
        weights={
            name.replace(".module.", "."): value.tolist()
            for name, value in parts.state_dict().items()
        },
    )


def scenario_no_process_group_is_not_needed_twice(context):
    # A group exists: _setup_distributed leaves it alone (no second init_dist).
    DDPStrategy()._setup_distributed("pytorch", "gloo")
    return torch.distributed.get_world_size()
