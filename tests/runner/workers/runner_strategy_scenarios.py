"""Scenarios of Runner and FlexibleRunner through their strategy in a 2-process gloo group (run
by tests/runner/test_runner_strategy.py through tests/support/gloo_group.py)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

from runner_toy_model import toy_cfg

from treadle.runner.registry import STRATEGIES
from treadle.runner.runner import FlexibleRunner, Runner
from treadle.runner.strategies import DDPStrategy

GLOO = dict(dist_cfg=dict(backend="gloo"))


@STRATEGIES.register_module()
class WriteRecordingDDPStrategy(DDPStrategy):
    """DDP whose writes are recorded: which keys each rank hands to write_checkpoint."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.writes = []

    def write_checkpoint(self, checkpoint, filepath, **kwargs):
        self.writes.append((os.path.basename(filepath), sorted(checkpoint)))
        super().write_checkpoint(checkpoint, filepath, **kwargs)


@STRATEGIES.register_module()
class EveryRankDDPStrategy(WriteRecordingDDPStrategy):
    """A strategy whose model state is computed its own way (as FSDP's gathers): every rank
    builds the checkpoint."""

    def model_state_dict(self):
        return super().model_state_dict()


def _cfg(context, name, **overrides):
    work_dir = os.path.join(context["out_dir"], name)
    overrides.setdefault("experiment_name", name)
    overrides.setdefault("val_dataloader", None)
    overrides.setdefault("val_cfg", None)
    overrides.setdefault("val_evaluator", None)
    overrides.setdefault("default_hooks", dict(checkpoint=dict(type="CheckpointHook", interval=1)))
    return toy_cfg(work_dir, launcher="pytorch", env_cfg=GLOO, **overrides)


def _weights(runner):
    return {k: v.tolist() for k, v in runner.model.module.state_dict().items()}


def scenario_plain_runner_picks_ddp(context):
    runner = Runner(**_cfg(context, "plain"))
    runner.train()
    return dict(
        strategy=type(runner.strategy).__name__,
        wrapper=type(runner.model).__name__,
        weights=_weights(runner),
    )


def scenario_flexible_runner_with_ddp(context):
    cfg = _cfg(context, "flexible")
    runner = FlexibleRunner(
        cfg.pop("model"), strategy=dict(type="WriteRecordingDDPStrategy"), **cfg
    )
    unwrapped_before_train = type(runner.model).__name__
    runner.train()
    return dict(
        before=unwrapped_before_train,
        wrapper=type(runner.model).__name__,
        weights=_weights(runner),
        writes=runner.strategy.writes,
    )


def scenario_every_rank_builds_the_checkpoint(context):
    cfg = _cfg(context, "every")
    runner = FlexibleRunner(cfg.pop("model"), strategy=dict(type="EveryRankDDPStrategy"), **cfg)
    runner.train()
    return dict(writes=runner.strategy.writes)


def scenario_flexible_runner_resumes_on_two_ranks(context):
    first = os.path.join(context["out_dir"], "flexible", "epoch_2.pth")
    cfg = _cfg(context, "resumed", resume=first)
    runner = FlexibleRunner(cfg.pop("model"), strategy=dict(type="DDPStrategy"), **cfg)
    runner.train()
    return dict(weights=_weights(runner), iter=runner.iter)
