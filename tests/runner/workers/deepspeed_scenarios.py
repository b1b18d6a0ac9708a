"""Scenarios of DeepSpeedStrategy in a 2-process gloo group on the CPU (run by
tests/runner/test_strategies_deepspeed_gloo.py through tests/support/gloo_group.py): ZeRO stages
0-3 through FlexibleRunner against DDP, DeepSpeed checkpoint directories, exact resume, weights
only loading, a train_batch_size that contradicts the dataloader."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

import torch
from runner_toy_model import toy_cfg

from treadle.runner.hooks import Hook
from treadle.runner.runner import FlexibleRunner, Runner

GLOO = dict(dist_cfg=dict(backend="gloo"))
ADAMW = dict(type="AdamW", lr=0.01)


class Losses(Hook):
    """Every training loss of this rank, as numbers (a test hook: syncs are fine here)."""

    def __init__(self):
        self.losses = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.losses.append(float(outputs["loss"]))


def _cfg(context, name, **overrides):
    work_dir = os.path.join(context["out_dir"], name)
    overrides.setdefault("experiment_name", name)
    overrides.setdefault("launcher", "pytorch")
    overrides.setdefault("env_cfg", GLOO)
    return toy_cfg(work_dir, **overrides)


def _deepspeed_runner(context, name, stage, losses=None, strategy=None, **overrides):
    if losses is not None:
        overrides["custom_hooks"] = [losses]
    strategy = dict(strategy or {}, type="DeepSpeedStrategy")
    strategy.setdefault("zero_optimization", dict(stage=stage))
    overrides.setdefault(
        "default_hooks",
        dict(
            logger=dict(type="LoggerHook", interval=1),
            checkpoint=dict(type="CheckpointHook", interval=1),
        ),
    )
    cfg = _cfg(
        context,
        name,
        optim_wrapper=dict(type="DeepSpeedOptimWrapper", optimizer=ADAMW),
        strategy=strategy,
        **overrides,
    )
    # Not from_cfg: it deep-copies the config, and the Losses hook must stay this object.
    return FlexibleRunner(**cfg)


def _weights(runner):
    # A collective under ZeRO-3 (gathers onto rank 0): every rank calls it.
    state = runner.strategy.model_state_dict()
    return {key: value.float().tolist() for key, value in state.items()}


def scenario_ddp_reference(context):
    losses = Losses()
    cfg = _cfg(
        context,
        "ddp",
        optim_wrapper=dict(type="OptimWrapper", optimizer=ADAMW),
        custom_hooks=[losses],
    )
    runner = Runner(**cfg)
    runner.train()
    weights = {k: v.tolist() for k, v in runner.model.module.state_dict().items()}
    return dict(losses=losses.losses, weights=weights)


def _train_stage(context, stage):
    losses = Losses()
    runner = _deepspeed_runner(context, f"zero{stage}", stage, losses)
    runner.train()
    engine = runner.strategy.engine
    work_dir = runner.work_dir
    return dict(
        losses=losses.losses,
        weights=_weights(runner),
        stage=engine.zero_optimization_stage(),
        optimizer=type(engine.optimizer).__name__,
        wrapper=type(runner.model).__name__,
        config=runner.strategy.engine_config,
        listing=sorted(os.listdir(os.path.join(work_dir, "epoch_3.pth"))),
        work_dir_entries=sorted(os.listdir(work_dir)),
        lr=runner.optim_wrapper.get_lr()["lr"],
    )


def scenario_zero0(context):
    return _train_stage(context, 0)


def scenario_zero1(context):
    return _train_stage(context, 1)


def scenario_zero2(context):
    return _train_stage(context, 2)


def scenario_zero3(context):
    return _train_stage(context, 3)


def _resume(context, stage):
    checkpoint = os.path.join(context["out_dir"], f"zero{stage}", "epoch_1.pth")
    losses = Losses()
    runner = _deepspeed_runner(context, f"resume{stage}", stage, losses, resume=checkpoint)
    runner.train()
    return dict(losses=losses.losses, weights=_weights(runner), epoch=runner.epoch)


def scenario_resume_zero2(context):
    return _resume(context, 2)


def scenario_resume_zero3(context):
    return _resume(context, 3)


class BeforeTraining(Hook):
    """What the run starts from, after load_or_resume."""

    def before_train(self, runner):
        self.seen = dict(
            weights=_weights(runner),
            optimizer_state=len(runner.optim_wrapper.optimizer.state),
            global_steps=runner.strategy.engine.global_steps,
        )


def scenario_load_from_weights_only(context):
    checkpoint = os.path.join(context["out_dir"], "zero1", "epoch_3.pth")
    start = BeforeTraining()
    runner = _deepspeed_runner(
        context,
        "load_from",
        1,
        load_from=checkpoint,
        train_cfg=dict(by_epoch=True, max_epochs=1),
        custom_hooks=[start],
    )
    runner.train()
    return start.seen


def scenario_load_from_zero3_into_zero2(context):
    checkpoint = os.path.join(context["out_dir"], "zero3", "epoch_3.pth")
    start = BeforeTraining()
    runner = _deepspeed_runner(
        context,
        "load_from3",
        2,
        load_from=checkpoint,
        train_cfg=dict(by_epoch=True, max_epochs=1),
        custom_hooks=[start],
    )
    runner.train()
    return start.seen


def scenario_save_without_optimizer(context):
    runner = _deepspeed_runner(context, "no_optim", 3, train_cfg=dict(by_epoch=True, max_epochs=1))
    runner.train()
    path = os.path.join(runner.work_dir, "weights.pth")
    runner.save_checkpoint(runner.work_dir, "weights.pth", save_optimizer=False)
    weights = _weights(runner)
    loaded = None
    if context["rank"] == 0:
        state = torch.load(path, map_location="cpu", weights_only=False)["state_dict"]
        loaded = {key: value.float().tolist() for key, value in state.items()}
    return dict(is_file=os.path.isfile(path), weights=weights, loaded=loaded)


def scenario_train_batch_size_contradicts(context):
    runner = _deepspeed_runner(
        context, "contradiction", 2, strategy=dict(config=dict(train_batch_size=32))
    )
    try:
        runner.train()
    except ValueError as error:
        return str(error)
    return None


def scenario_wrong_optim_wrapper(context):
    cfg = _cfg(
        context,
        "wrong_wrapper",
        optim_wrapper=dict(type="OptimWrapper", optimizer=ADAMW),
        strategy=dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=1)),
    )
    try:
        FlexibleRunner.from_cfg(cfg).train()
    except TypeError as error:
        return str(error)
    return None


def _strategy_steps(strategy, steps, rank):
    from runner_toy_model import ToyModel

    torch.manual_seed(0)
    model, optim_wrapper = strategy.prepare(
        ToyModel(),
        optim_wrapper=dict(type="DeepSpeedOptimWrapper", optimizer=ADAMW),
        dispatch_kwargs=dict(train_micro_batch_size_per_gpu=2),
    )
    losses = []
    for step in steps:
        generator = torch.Generator().manual_seed(100 * step + rank)
        data = dict(
            inputs=list(torch.randn(2, 2, generator=generator)),
            data_samples=list(torch.randn(2, generator=generator)),
        )
        losses.append(float(model.train_step(data, optim_wrapper)["loss"]))
    return losses


def scenario_strategy_api_save_and_resume(context):
    from treadle.runner.strategies import DeepSpeedStrategy

    path = os.path.join(context["out_dir"], "api", "step_2.pth")
    first = DeepSpeedStrategy(zero_optimization=dict(stage=2))
    full = _strategy_steps(first, range(4), context["rank"])
    # Save after two more steps in a second run, as MMEngine's strategy API does.
    saver = DeepSpeedStrategy(zero_optimization=dict(stage=2))
    _strategy_steps(saver, range(2), context["rank"])
    saver.save_checkpoint(path, extra_ckpt=dict(meta=dict(iter=2)))
    resumer = DeepSpeedStrategy(zero_optimization=dict(stage=2))
    _strategy_steps(resumer, [], context["rank"])
    extra = resumer.resume(path)
    model, optim_wrapper = resumer.model, resumer.optim_wrapper
    resumed = []
    for step in range(2, 4):
        generator = torch.Generator().manual_seed(100 * step + context["rank"])
        data = dict(
            inputs=list(torch.randn(2, 2, generator=generator)),
            data_samples=list(torch.randn(2, generator=generator)),
        )
        resumed.append(float(model.train_step(data, optim_wrapper)["loss"]))
    loaded = DeepSpeedStrategy(zero_optimization=dict(stage=1))
    _strategy_steps(loaded, [], context["rank"])
    weights_only = loaded.load_checkpoint(path)
    return dict(
        full=full,
        resumed=resumed,
        meta_iter=extra["meta"]["iter"],
        is_dir=os.path.isdir(path),
        loaded_keys=sorted(weights_only),
        loaded_steps=loaded.engine.global_steps,
    )
