"""Scheduler inputs MMEngine accepts (treadle once refused them), and MMEngine's error classes
and phrases where both refuse, since downstream tests match on them."""

from __future__ import annotations

import warnings
from unittest.mock import MagicMock

import pytest
from runner_toys import make_sgd, step_values

from treadle.runner.optim import (
    CosineAnnealingLR,
    CosineRestartLR,
    LinearLR,
    OneCycleParamScheduler,
    OptimWrapper,
    ReduceOnPlateauLR,
    StepLR,
)


def test_linear_warm_up_from_zero():
    optimizer = make_sgd(lr=1.0)
    scheduler = LinearLR(optimizer, start_factor=0, end=5, by_epoch=False)
    # From 0 no ratio can grow the value: the step after it scales the base value.
    assert step_values(optimizer, scheduler, 6) == pytest.approx([0.0, 0.25, 0.5, 0.75, 1.0, 1.0])


def test_linear_from_zero_loads_another_schedulers_state():
    optimizer = make_sgd(lr=1.0)
    first = LinearLR(optimizer, start_factor=1 / 3)
    step_values(optimizer, first, 4)
    copy = LinearLR(make_sgd(lr=1.0), start_factor=0, end_factor=0.3)
    copy.load_state_dict(first.state_dict())
    assert copy.start_factor == first.start_factor and copy.last_step == first.last_step


def test_plateau_by_epoch_false_is_an_assertion_error_too():
    with pytest.raises(AssertionError, match=r"Now ReduceOnPlateauLR only support by_epoch=True"):
        ReduceOnPlateauLR(make_sgd(), by_epoch=False)


@pytest.mark.parametrize("last_step", [1.5, -2])
def test_plateau_bad_last_step_is_an_assertion_error(last_step):
    with pytest.raises(AssertionError, match=r"last_step must be an int >= -1"):
        ReduceOnPlateauLR(make_sgd(), last_step=last_step)


def test_plateau_phrases():
    with pytest.raises(ValueError, match=r"end should be larger than begin, but got begin=10"):
        ReduceOnPlateauLR(make_sgd(), begin=10, end=5)
    with pytest.raises(ValueError, match=r"mode foo is unknown!"):
        ReduceOnPlateauLR(make_sgd(), rule="foo")
    with pytest.raises(ValueError, match=r"threshold mode foo is unknown!"):
        ReduceOnPlateauLR(make_sgd(), threshold_rule="foo")
    with pytest.raises(
        TypeError, match=r"metrics type should be dict, but got type <class 'tuple'>"
    ):
        ReduceOnPlateauLR(make_sgd()).step(("foo", 1.0))


def test_cosine_eta_min_and_ratio_is_an_assertion_error_too():
    with pytest.raises(AssertionError, match=r"either `eta_min` or `eta_min_ratio should be"):
        CosineAnnealingLR(make_sgd(), T_max=10, eta_min=0.0, eta_min_ratio=0.1)
    with pytest.raises(AssertionError, match=r"periods and restart_weights need one entry"):
        CosineRestartLR(make_sgd(), periods=[5, 5], restart_weights=[1], eta_min=0)


def test_one_cycle_of_another_param_is_an_assertion_error_too():
    with pytest.raises(AssertionError, match=r"OneCycle only works for learning rate"):
        OneCycleParamScheduler(make_sgd(momentum=0.9), "momentum", eta_max=1, total_steps=5)


def test_conversion_of_an_iteration_schedule_is_an_assertion_error_too():
    with pytest.raises(AssertionError, match=r"only epoch-based kwargs whose `by_epoch=True`"):
        StepLR.build_iter_from_epoch(make_sgd(), step_size=1, by_epoch=False, epoch_length=3)
    with pytest.raises(AssertionError, match=r"`epoch_length` must be a positive integer"):
        StepLR.build_iter_from_epoch(make_sgd(), step_size=1, epoch_length=-1)


def test_stepping_before_the_optimizer_warns_with_pytorchs_link():
    optimizer = make_sgd()
    scheduler = StepLR(optimizer, step_size=3)
    with pytest.warns(UserWarning, match=r"how-to-adjust-learning-rate"):
        scheduler.step()


def test_a_mock_optim_wrapper_is_taken():
    # MMEngine takes a MagicMock(spec=OptimWrapper): tests stand one in for a real wrapper.
    mock = MagicMock(spec=OptimWrapper)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler = StepLR(mock, step_size=1)
        scheduler.step()
    assert scheduler.get_last_value() == []


@pytest.mark.parametrize("bad", ["invalid_optimizer", None, 3])
def test_not_an_optimizer_names_mmengine_phrase(bad):
    with pytest.raises(TypeError, match=r"StepLR: ``optimizer`` should be an Optimizer, but got"):
        StepLR(bad, step_size=1)
