"""Scenarios of ColossalAIStrategy in a 2-process gloo group on the CPU with TorchDDPPlugin
(the plugin that runs without GPUs), run by tests/runner/test_strategies_colossalai_gloo.py
through tests/support/gloo_group.py: the same training as DDP, booster checkpoint directories,
exact resume, weights-only loading."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from deepspeed_scenarios import ADAMW, BeforeTraining, Losses, _cfg, _weights

from treadle.runner.runner import FlexibleRunner, Runner


def _colossalai_runner(context, name, losses=None, **overrides):
    if losses is not None:
        overrides["custom_hooks"] = [losses]
    overrides.setdefault(
        "default_hooks",
        dict(
            logger=dict(type="LoggerHook", interval=1),
            checkpoint=dict(type="CheckpointHook", interval=1),
        ),
    )
    overrides.setdefault("optim_wrapper", dict(type="ColossalAIOptimWrapper", optimizer=ADAMW))
    cfg = _cfg(
        context, name, strategy=dict(type="ColossalAIStrategy", plugin="torch-ddp"), **overrides
    )
    return FlexibleRunner(**cfg)


def scenario_ddp_reference(context):
    losses = Losses()
    runner = Runner(
        **_cfg(
            context,
            "ddp",
            optim_wrapper=dict(type="OptimWrapper", optimizer=ADAMW),
            custom_hooks=[losses],
        )
    )
    runner.train()
    return dict(losses=losses.losses, weights=_weights(runner))


def scenario_train(context):
    losses = Losses()
    runner = _colossalai_runner(context, "colossalai", losses)
    runner.train()
    return dict(
        losses=losses.losses,
        weights=_weights(runner),
        plugin=type(runner.strategy.booster.plugin).__name__,
        wrapper=type(runner.model).__name__,
        optimizer=type(runner.optim_wrapper.optimizer).__name__,
        listing=sorted(os.listdir(os.path.join(runner.work_dir, "epoch_3.pth"))),
        entries=sorted(os.listdir(runner.work_dir)),
    )


def scenario_resume(context):
    losses = Losses()
    checkpoint = os.path.join(context["out_dir"], "colossalai", "epoch_1.pth")
    runner = _colossalai_runner(context, "resume", losses, resume=checkpoint)
    runner.train()
    return dict(losses=losses.losses, weights=_weights(runner), epoch=runner.epoch)


class StartState(BeforeTraining):
    def before_train(self, runner):
        self.seen = dict(
            weights=_weights(runner),
            optimizer_state=len(runner.optim_wrapper.optimizer.state_dict()["state"]),
        )


def scenario_load_from(context):
    start = StartState()
    checkpoint = os.path.join(context["out_dir"], "colossalai", "epoch_3.pth")
    runner = _colossalai_runner(
        context,
        "load_from",
        load_from=checkpoint,
        train_cfg=dict(by_epoch=True, max_epochs=1),
        custom_hooks=[start],
    )
    runner.train()
    return start.seen


def scenario_wrong_optim_wrapper(context):
    runner = _colossalai_runner(
        context, "wrong", optim_wrapper=dict(type="OptimWrapper", optimizer=ADAMW)
    )
    try:
        runner.train()
    except TypeError as error:
        return str(error)
    return None
