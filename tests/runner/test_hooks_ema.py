"""EMAHook: averaging after each iteration, the averaged weights swapped in for evaluation and
into saved checkpoints, resuming, begin_iter/begin_epoch, bad arguments."""

from __future__ import annotations

import copy

import pytest
import torch
from hooks_a_stub_runner import HooksStubRunner

from treadle.runner.hooks import EMAHook


@pytest.fixture
def runner(tmp_path):
    return HooksStubRunner(tmp_path)


def train_step(runner, generator):
    """One SGD step with random gradients; the model changes in a known way."""
    for param in runner.model.parameters():
        param.grad = torch.randn(param.shape, generator=generator)
    runner.optim_wrapper.optimizer.step()


def params(model):
    return [p.detach().clone() for p in model.parameters()]


def expected_average(history, momentum, begin=0):
    """The EMA of the weight snapshots ``history[begin:]``: a copy, then lerps."""
    average = [p.clone() for p in history[begin]]
    for snapshot in history[begin + 1 :]:
        average = [a + momentum * (s - a) for a, s in zip(average, snapshot, strict=True)]
    return average


def run(runner, hook, iters, generator):
    history = []
    for i in range(iters):
        runner.iter = i
        train_step(runner, generator)
        history.append(params(runner.model))
        hook.after_train_iter(runner, i)
    return history


def assert_close(a, b):
    for x, y in zip(a, b, strict=True):
        torch.testing.assert_close(x, y)


def test_the_average_follows_each_iteration(runner):
    hook = EMAHook(momentum=0.5)
    hook.before_run(runner)
    hook.before_train(runner)
    history = run(runner, hook, 4, torch.Generator().manual_seed(1))
    assert_close(params(hook.ema_model.module), expected_average(history, 0.5))


def test_evaluation_runs_with_the_average_and_training_gets_its_weights_back(runner):
    hook = EMAHook(momentum=0.5)
    hook.before_run(runner)
    history = run(runner, hook, 3, torch.Generator().manual_seed(2))
    average = expected_average(history, 0.5)
    for mode in ("val", "test"):
        getattr(hook, f"before_{mode}_epoch")(runner)
        assert_close(params(runner.model), average)
        getattr(hook, f"after_{mode}_epoch")(runner, metrics={})
        assert_close(params(runner.model), history[-1])


def test_before_begin_iter_the_average_is_the_model(runner):
    hook = EMAHook(momentum=0.5, begin_iter=3)
    hook.before_run(runner)
    hook.before_train(runner)
    generator = torch.Generator().manual_seed(3)
    history = run(runner, hook, 2, generator)
    hook.before_val_epoch(runner)
    assert_close(params(runner.model), history[-1])  # no average yet: the model itself
    hook.after_val_epoch(runner, metrics={})
    history += run_from(runner, hook, 2, 5, generator)
    # Iteration 2 (the 3rd) starts the average from the weights of that moment.
    assert_close(params(hook.ema_model.module), expected_average(history, 0.5, begin=2))


def run_from(runner, hook, start, stop, generator):
    history = []
    for i in range(start, stop):
        runner.iter = i
        train_step(runner, generator)
        history.append(params(runner.model))
        hook.after_train_iter(runner, i)
    return history


def test_begin_epoch(runner):
    hook = EMAHook(momentum=0.5, begin_epoch=2)
    hook.before_run(runner)
    hook.before_train(runner)
    generator = torch.Generator().manual_seed(4)
    runner.epoch = 0
    run(runner, hook, 2, generator)
    assert int(hook.ema_model.steps) == 0
    runner.epoch = 1
    run(runner, hook, 2, generator)
    assert int(hook.ema_model.steps) == 2


def test_a_checkpoint_holds_the_average_as_state_dict(runner):
    hook = EMAHook(momentum=0.5)
    hook.before_run(runner)
    history = run(runner, hook, 3, torch.Generator().manual_seed(5))
    average = expected_average(history, 0.5)
    checkpoint = {"state_dict": copy.deepcopy(runner.model.state_dict())}
    hook.before_save_checkpoint(runner, checkpoint)
    names = [name for name, _ in runner.model.named_parameters()]
    assert_close([checkpoint["state_dict"][n] for n in names], average)
    assert_close([checkpoint["ema_state_dict"][f"module.{n}"] for n in names], history[-1])
    assert int(checkpoint["ema_state_dict"]["steps"]) == 3


def test_resuming_restores_the_weights_and_the_average(runner, tmp_path):
    hook = EMAHook(momentum=0.5)
    hook.before_run(runner)
    history = run(runner, hook, 3, torch.Generator().manual_seed(6))
    checkpoint = {"state_dict": copy.deepcopy(runner.model.state_dict())}
    hook.before_save_checkpoint(runner, checkpoint)
    torch.save(checkpoint, tmp_path / "ckpt.pth")
    loaded = torch.load(tmp_path / "ckpt.pth", weights_only=True)

    fresh = HooksStubRunner(tmp_path / "again")
    fresh._resume = True
    resumed = EMAHook(momentum=0.5)
    resumed.before_run(fresh)
    resumed.after_load_checkpoint(fresh, loaded)
    # The runner loads `state_dict` into the model after the hooks: the trained weights.
    fresh.model.load_state_dict(loaded["state_dict"])
    assert_close(params(fresh.model), history[-1])
    assert_close(params(resumed.ema_model.module), expected_average(history, 0.5))
    assert resumed.ema_model._host_steps == 3


def test_loading_weights_only_starts_the_average_from_them(runner, tmp_path):
    other = HooksStubRunner(tmp_path / "other")
    with torch.no_grad():
        for p in other.model.parameters():
            p.add_(1.0)
    checkpoint = {"state_dict": copy.deepcopy(other.model.state_dict())}
    hook = EMAHook()
    hook.before_run(runner)
    hook.after_load_checkpoint(runner, checkpoint)
    assert_close(params(hook.ema_model.module), params(other.model))


def test_resuming_a_checkpoint_without_average_warns(runner):
    from runner_toys import captured_log

    runner._resume = True
    hook = EMAHook()
    hook.before_run(runner)
    with captured_log() as log:
        hook.after_load_checkpoint(runner, {"state_dict": runner.model.state_dict()})
    assert any("has no 'ema_state_dict'" in m for m in log.messages)


def test_other_averaged_models_by_name(runner):
    hook = EMAHook(ema_type="StochasticWeightAverage")
    hook.before_run(runner)
    assert type(hook.ema_model).__name__ == "StochasticWeightAverage"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(begin_iter=2, begin_epoch=1), "set begin_iter or begin_epoch, not both"),
        (dict(begin_iter=-1), "begin_iter must be an int >= 0, got -1"),
        (dict(begin_epoch=1.5), "begin_epoch must be an int >= 0, got 1.5"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        EMAHook(**kwargs)


def test_begin_after_the_end_is_refused(runner):
    hook = EMAHook(begin_iter=13)
    hook.before_run(runner)
    with pytest.raises(
        ValueError, match=r"begin_iter=13 is after the last iteration \(max_iters=12\)"
    ):
        hook.before_train(runner)
    hook = EMAHook(begin_epoch=4)
    hook.before_run(runner)
    with pytest.raises(ValueError, match=r"begin_epoch=4 is after the last epoch \(max_epochs=3\)"):
        hook.before_train(runner)


def test_unknown_ema_type_names_the_closest(runner):
    hook = EMAHook(ema_type="ExponentialMovingAvg")
    with pytest.raises(KeyError, match="ExponentialMovingAverage"):
        hook.before_run(runner)
