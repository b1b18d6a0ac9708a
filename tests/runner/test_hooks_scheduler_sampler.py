"""ParamSchedulerHook (per-iteration, per-epoch and validation-driven schedulers; one list or
one per optimizer) and DistSamplerSeedHook."""

from __future__ import annotations

from types import SimpleNamespace
from unittest.mock import MagicMock

import pytest
import torch
from hooks_a_stub_runner import HooksStubRunner

from treadle.runner.hooks import DistSamplerSeedHook, ParamSchedulerHook
from treadle.runner.optim import MultiStepLR, ReduceOnPlateauLR


@pytest.fixture
def runner(tmp_path):
    return HooksStubRunner(tmp_path)


def lr(runner):
    return runner.optim_wrapper.optimizer.param_groups[0]["lr"]


def test_no_schedulers_is_fine(runner):
    hook = ParamSchedulerHook()
    hook.after_train_iter(runner, 0)
    hook.after_train_epoch(runner)
    hook.after_val_epoch(runner, metrics={"loss": 1.0})


def test_iteration_schedulers_step_after_iterations_and_epoch_ones_after_epochs(runner):
    optimizer = runner.optim_wrapper.optimizer
    by_iter = MultiStepLR(optimizer, milestones=[2], gamma=0.5, by_epoch=False)
    by_epoch = MultiStepLR(optimizer, milestones=[1], gamma=0.1, by_epoch=True)
    runner.param_schedulers = [by_iter, by_epoch]
    hook = ParamSchedulerHook()
    seen = []
    for i in range(3):
        optimizer.step()
        hook.after_train_iter(runner, i)
        seen.append(lr(runner))
    assert seen == pytest.approx([0.1, 0.05, 0.05])
    hook.after_train_epoch(runner)
    assert lr(runner) == pytest.approx(0.005)


def test_a_dict_of_lists_steps_every_optimizers_schedulers(runner):
    a = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    b = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    runner.param_schedulers = {
        "a": [MultiStepLR(a, milestones=[1], by_epoch=False)],
        "b": [MultiStepLR(b, milestones=[1], by_epoch=True)],
    }
    hook = ParamSchedulerHook()
    a.step()
    b.step()
    hook.after_train_iter(runner, 0)
    assert a.param_groups[0]["lr"] == pytest.approx(0.1)
    assert b.param_groups[0]["lr"] == 1.0
    hook.after_train_epoch(runner)
    assert b.param_groups[0]["lr"] == pytest.approx(0.1)


def test_replaced_schedulers_are_picked_up(runner):
    hook = ParamSchedulerHook()
    optimizer = runner.optim_wrapper.optimizer
    first = MultiStepLR(optimizer, milestones=[100], by_epoch=False)
    runner.param_schedulers = [first]
    optimizer.step()
    hook.after_train_iter(runner, 0)
    second = MultiStepLR(optimizer, milestones=[100], by_epoch=False)
    runner.param_schedulers = [second]
    optimizer.step()
    hook.after_train_iter(runner, 1)
    assert first.last_step == 1 and second.last_step == 1


def test_validation_driven_schedulers_get_the_metrics(runner):
    optimizer = runner.optim_wrapper.optimizer
    plateau = ReduceOnPlateauLR(optimizer, monitor="loss", patience=0, factor=0.5)
    runner.param_schedulers = [plateau]
    hook = ParamSchedulerHook()
    hook.after_val_epoch(runner, metrics=None)  # nothing to compare: no step
    hook.after_val_epoch(runner, metrics={"loss": 1.0})
    hook.after_val_epoch(runner, metrics={"loss": 2.0})
    assert lr(runner) == pytest.approx(0.05)


SHAPE = (
    "runner.param_schedulers should be list of ParamScheduler or a dict containing list of "
    "ParamScheduler"
)


@pytest.mark.parametrize("bad", [("not", "a", "list"), 3, MagicMock()])
@pytest.mark.parametrize("when", ["after_train_epoch", "after_train_iter", "after_val_epoch"])
def test_bad_param_schedulers_are_named(runner, bad, when):
    runner.param_schedulers = bad
    hook = ParamSchedulerHook()
    args = {"after_train_iter": (0,), "after_val_epoch": ({"acc": 1.0},)}.get(when, ())
    with pytest.raises(TypeError, match=rf"{SHAPE} \(one list per optimizer\), got "):
        getattr(hook, when)(runner, *args)


def test_a_dict_holding_a_scheduler_instead_of_a_list_is_named(runner):
    runner.param_schedulers = {"a": "scheduler"}
    with pytest.raises(TypeError, match=rf"{SHAPE} .*got a dict holding str: 'scheduler'") as e:
        ParamSchedulerHook().after_train_epoch(runner)
    # MMEngine asserts there: its users catch AssertionError.
    assert isinstance(e.value, AssertionError)
    # Validation skips what is not a list of built schedulers, as MMEngine's does.
    ParamSchedulerHook().after_val_epoch(runner, {"acc": 1.0})


def test_a_mock_runner_steps_its_schedulers():
    """Downstream tests stand a Mock in for the runner: its made-up optimizer wrapper counts
    no skipped steps."""
    scheduler = MagicMock(by_epoch=False)
    runner = MagicMock()
    runner.param_schedulers = [scheduler]
    ParamSchedulerHook().after_train_iter(runner, 0)
    scheduler.step.assert_called_once_with()


class Sampler:
    def __init__(self):
        self.epochs = []

    def set_epoch(self, epoch):
        self.epochs.append(epoch)

    def __iter__(self):
        return iter(())


def test_sampler_seed_sets_the_epoch_on_the_sampler(runner):
    runner.epoch = 2
    DistSamplerSeedHook().before_train_epoch(runner)
    assert runner.train_dataloader.sampler.epoch == 2


def test_sampler_seed_looks_inside_a_batch_sampler():
    sampler = Sampler()
    loader = SimpleNamespace(sampler=object(), batch_sampler=SimpleNamespace(sampler=sampler))
    runner = SimpleNamespace(epoch=4, train_loop=SimpleNamespace(dataloader=loader))
    DistSamplerSeedHook().before_train_epoch(runner)
    assert sampler.epochs == [4]


def test_sampler_seed_ignores_samplers_without_set_epoch():
    loader = SimpleNamespace(sampler=object(), batch_sampler=None)
    runner = SimpleNamespace(epoch=1, train_loop=SimpleNamespace(dataloader=loader))
    DistSamplerSeedHook().before_train_epoch(runner)


def test_validation_outside_training_leaves_the_unbuilt_schedulers_alone(tmp_path):
    """runner.val() before any training: the schedulers are still configs (a plateau one
    among them, which would read the metrics in training); validation runs and returns."""
    from runner_toy_model import toy_cfg

    from treadle.runner.runner import Runner

    cfg = toy_cfg(tmp_path)
    cfg["param_scheduler"] = [
        dict(type="ReduceOnPlateauLR", monitor="acc", rule="greater", by_epoch=True)
    ]
    metrics = Runner(**cfg).val()
    assert "acc" in metrics
