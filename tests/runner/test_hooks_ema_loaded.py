"""EMAHook after a checkpoint's averaged weights were loaded: they are what evaluation and the
next save use, even when the loaded state holds no step count (or 0), until training goes on.
By the hook's calls, and through a real resume."""

from __future__ import annotations

import copy
from typing import ClassVar

import pytest
import torch
from hooks_a_stub_runner import HooksStubRunner
from runner_toy_model import toy_cfg

from treadle.runner.hooks import EMAHook, Hook
from treadle.runner.registry import HOOKS
from treadle.runner.runner import Runner


def params(model):
    return [p.detach().clone() for p in model.parameters()]


def assert_close(a, b):
    for x, y in zip(a, b, strict=True):
        torch.testing.assert_close(x, y)


def shifted(model, by):
    return [p + by for p in params(model)]


@pytest.fixture
def runner(tmp_path):
    runner = HooksStubRunner(tmp_path)
    runner._resume = True
    return runner


def ema_checkpoint(model, average, steps):
    """What a checkpoint of EMAHook holds: the average as state_dict, the trained weights
    under ema_state_dict with a 'module.' prefix (and no 'steps' when ``steps`` is None)."""
    names = [name for name, _ in model.named_parameters()]
    state = {name: value.clone() for name, value in model.state_dict().items()}
    state.update(zip(names, average, strict=True))
    ema = {f"module.{name}": value for name, value in model.state_dict().items()}
    if steps is not None:
        ema["steps"] = torch.tensor(steps)
    return {"state_dict": state, "ema_state_dict": ema}


@pytest.mark.parametrize("steps", [None, 0])
def test_evaluation_after_resuming_uses_the_loaded_average(runner, steps):
    hook = EMAHook(momentum=0.5)
    hook.before_run(runner)
    trained = params(runner.model)
    average = shifted(runner.model, 1.0)
    checkpoint = ema_checkpoint(runner.model, average, steps)
    hook.after_load_checkpoint(runner, checkpoint)
    runner.model.load_state_dict(checkpoint["state_dict"])  # what the runner does next
    hook.before_val_epoch(runner)
    assert_close(params(runner.model), average)
    hook.after_val_epoch(runner, metrics={})
    assert_close(params(runner.model), trained)
    # A save before any training iteration keeps the loaded average too.
    saved = {"state_dict": copy.deepcopy(runner.model.state_dict())}
    hook.before_save_checkpoint(runner, saved)
    names = [name for name, _ in runner.model.named_parameters()]
    assert_close([saved["state_dict"][n] for n in names], average)


def test_loading_weights_only_evaluates_them(tmp_path):
    runner = HooksStubRunner(tmp_path)
    hook = EMAHook()
    hook.before_run(runner)
    loaded = shifted(runner.model, 2.0)
    names = [name for name, _ in runner.model.named_parameters()]
    hook.after_load_checkpoint(runner, {"state_dict": dict(zip(names, loaded, strict=True))})
    hook.before_val_epoch(runner)
    assert_close(params(runner.model), loaded)


def test_before_averaging_starts_training_makes_the_model_the_average_again(runner):
    hook = EMAHook(momentum=0.5, begin_iter=5)
    hook.before_run(runner)
    hook.before_train(runner)
    hook.after_load_checkpoint(runner, ema_checkpoint(runner.model, shifted(runner.model, 1.0), 0))
    with torch.no_grad():
        for p in runner.model.parameters():
            p.add_(3.0)
    runner.iter = 0
    hook.after_train_iter(runner, 0)  # before begin_iter: MMEngine copies the model here
    live = params(runner.model)
    hook.before_val_epoch(runner)
    assert_close(params(runner.model), live)


@HOOKS.register_module(name="RecordValWeightsHook", force=True)
class RecordValWeightsHook(Hook):
    """Records the model's weights when a validation epoch starts (after EMAHook's swap)."""

    priority = "LOWEST"
    seen: ClassVar[list] = []

    def before_val_epoch(self, runner):
        type(self).seen.append(params(runner.model))


def test_a_real_resume_evaluates_the_loaded_average(tmp_path):
    """Train with EMAHook and save; take the step count out of the saved average (a state
    without one, as other tools write); a new runner resumes it and validates: the weights
    evaluated are the saved average, not the trained weights."""
    work_dir = tmp_path / "run"
    cfg = toy_cfg(
        work_dir,
        train_cfg=dict(by_epoch=True, max_epochs=2, val_interval=10),
        custom_hooks=[dict(type="EMAHook", momentum=0.3)],
    )
    Runner(**cfg).train()
    path = work_dir / "epoch_2.pth"
    checkpoint = torch.load(path, weights_only=True)
    average = checkpoint["state_dict"]
    trained = {
        key[len("module.") :]: value
        for key, value in checkpoint["ema_state_dict"].items()
        if key.startswith("module.")
    }
    names = [name for name in average if name in trained]
    assert any(not torch.equal(average[n], trained[n]) for n in names)
    del checkpoint["ema_state_dict"]["steps"]
    torch.save(checkpoint, path)

    RecordValWeightsHook.seen = []
    resumed = Runner(
        **toy_cfg(
            work_dir,
            train_cfg=dict(by_epoch=True, max_epochs=2, val_interval=10),
            custom_hooks=[dict(type="EMAHook", momentum=0.3), dict(type="RecordValWeightsHook")],
            resume=True,
            load_from=str(path),
        )
    )
    resumed.val()
    names = [n for n, _ in resumed.model.named_parameters()]
    evaluated = dict(zip(names, RecordValWeightsHook.seen[0], strict=True))
    for name in evaluated:
        torch.testing.assert_close(evaluated[name], average[name])
    # After validation the model holds the trained weights again.
    for name, value in resumed.model.named_parameters():
        torch.testing.assert_close(value.detach(), trained[name])
