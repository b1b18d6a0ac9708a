"""Family-specific behaviour and the mistakes each family refuses, with their messages."""

from __future__ import annotations

import math

import pytest
import torch
from runner_toys import make_sgd, step_values

from treadle.runner.optim import (
    ConstantLR,
    CosineAnnealingLR,
    CosineRestartLR,
    CosineRestartParamScheduler,
    LinearLR,
    MultiStepLR,
    OneCycleLR,
    OneCycleParamScheduler,
    PolyParamScheduler,
    ReduceOnPlateauLR,
    StepLR,
)

# --- Constant ---


@pytest.mark.parametrize("factor", [-0.1, 1.5])
def test_constant_factor_out_of_range(factor):
    with pytest.raises(
        ValueError,
        match=rf"ConstantLR: Constant multiplicative factor should between 0 and 1, got {factor}",
    ):
        ConstantLR(make_sgd(), factor=factor)


def test_constant_factor_zero_freezes_then_restores():
    optimizer = make_sgd(lr=0.5)
    scheduler = ConstantLR(optimizer, factor=0.0, end=4)
    assert step_values(optimizer, scheduler, 6) == [0.0, 0.0, 0.0, 0.5, 0.5, 0.5]


# --- Step, MultiStep ---


def test_step_size_must_be_positive():
    with pytest.raises(ValueError, match=r"StepLR: step_size must be > 0, got 0"):
        StepLR(make_sgd(), step_size=0)


def test_multistep_milestones_must_be_a_list():
    with pytest.raises(
        TypeError, match=r"MultiStepLR: milestones must be a list of steps, got int"
    ):
        MultiStepLR(make_sgd(), milestones=3)


def test_step_schedules_any_param_name():
    from treadle.runner.optim import StepParamScheduler

    optimizer = make_sgd(weight_decay=0.01)
    scheduler = StepParamScheduler(optimizer, "weight_decay", step_size=2, gamma=0.5)
    values = step_values(optimizer, scheduler, 5, key="weight_decay")
    assert values == pytest.approx([0.01, 0.01, 0.005, 0.005, 0.0025])
    assert optimizer.param_groups[0]["lr"] == 1.0


# --- Linear ---


@pytest.mark.parametrize("start_factor", [-0.1, 1.5])
def test_linear_start_factor_out_of_range(start_factor):
    with pytest.raises(
        ValueError,
        match=rf"LinearLR: start_factor={start_factor} is out of range: Starting multiplicative "
        r"factor should between 0 and 1",
    ):
        LinearLR(make_sgd(), start_factor=start_factor, end=5)


def test_linear_end_factor_out_of_range():
    with pytest.raises(
        ValueError,
        match=r"LinearLR: end_factor=2 is out of range: Ending multiplicative factor should",
    ):
        LinearLR(make_sgd(), end_factor=2, end=5)


# --- Cosine ---


def test_cosine_eta_min_and_ratio_exclusive():
    with pytest.raises(ValueError, match=r"either `eta_min` or `eta_min_ratio should be specified"):
        CosineAnnealingLR(make_sgd(), T_max=5, eta_min=0.1, eta_min_ratio=0.1)


def test_cosine_t_max_defaults_to_the_range_and_ratio_per_group():
    optimizer = torch.optim.SGD(
        [
            {"params": [torch.nn.Parameter(torch.zeros(1))]},
            {"params": [torch.nn.Parameter(torch.zeros(1))], "lr": 0.1},
        ],
        lr=1.0,
    )
    scheduler = CosineAnnealingLR(optimizer, eta_min_ratio=0.5, begin=2, end=6)
    assert scheduler.T_max == 4
    for _ in range(5):
        optimizer.step()
        scheduler.step()
    # Step 5 is the last one before end (last_step 3 of T_max 4); each group anneals towards
    # half its own base value.
    left = (1 + math.cos(math.pi * 3 / 4)) / 2
    assert scheduler.get_last_value() == pytest.approx([0.5 + 0.5 * left, 0.05 + 0.05 * left])


def test_cosine_t_max_zero_refused():
    with pytest.raises(ValueError, match=r"CosineAnnealingLR: T_max must be > 0, got 0"):
        CosineAnnealingLR(make_sgd(), T_max=0, end=10)


def test_cosine_restart_lengths_must_match():
    with pytest.raises(ValueError, match=r"got 2 periods \[5, 5\] and 1 restart_weights \[1\]"):
        CosineRestartLR(make_sgd(), periods=[5, 5], eta_min=0.0)


def test_cosine_restart_needs_eta_min_or_ratio():
    with pytest.raises(
        ValueError, match=r"CosineRestartLR: either `eta_min` or `eta_min_ratio should be specified"
    ):
        CosineRestartLR(make_sgd(), periods=[5], restart_weights=[1])


def test_cosine_restart_bad_period():
    with pytest.raises(ValueError, match=r"every period must be > 0, got \[5, 0\]"):
        CosineRestartLR(make_sgd(), periods=[5, 0], restart_weights=[1, 1], eta_min=0.0)


def test_cosine_restart_restarts_and_then_holds():
    optimizer = make_sgd()
    scheduler = CosineRestartLR(
        optimizer, periods=[4, 4], restart_weights=[1, 0.5], eta_min_ratio=0.0
    )
    values = step_values(optimizer, scheduler, 10)
    cycle = [(1 + math.cos(math.pi * t / 4)) / 2 for t in range(4)]
    last = values[7] * 1  # after the last cycle the value is left as it is
    assert values == pytest.approx([*cycle, *(0.5 * c for c in cycle), last, last])
    assert CosineRestartParamScheduler.get_position_from_periods(8, [4, 8]) is None


# --- Poly ---


def test_poly_reaches_eta_min_at_end():
    optimizer = make_sgd()
    scheduler = PolyParamScheduler(optimizer, "lr", eta_min=0.1, power=2.0, end=5)
    values = step_values(optimizer, scheduler, 7)
    assert values[4] == pytest.approx(0.1) and values[6] == pytest.approx(0.1)
    assert values[0] == 1.0 and values[1] == pytest.approx(0.1 + 0.9 * (3 / 4) ** 2)


# --- OneCycle ---


def test_one_cycle_needs_total_steps_or_end():
    with pytest.raises(ValueError, match=r"OneCycleLR: the length of the cycle is unknown"):
        OneCycleLR(make_sgd(), eta_max=1.0)


def test_one_cycle_total_steps_from_range():
    assert OneCycleLR(make_sgd(), eta_max=1.0, begin=10, end=110).total_steps == 100


@pytest.mark.parametrize("total_steps", [0, -3, 2.5])
def test_one_cycle_bad_total_steps(total_steps):
    with pytest.raises(ValueError, match=r"Expected positive integer total_steps, but got"):
        OneCycleLR(make_sgd(), eta_max=1.0, total_steps=total_steps)


@pytest.mark.parametrize("pct_start", [-0.1, 1.5, "half"])
def test_one_cycle_bad_pct_start(pct_start):
    with pytest.raises(ValueError, match=r"Expected float between 0 and 1 pct_start, but got"):
        OneCycleLR(make_sgd(), eta_max=1.0, total_steps=10, pct_start=pct_start)


def test_one_cycle_bad_anneal_strategy():
    with pytest.raises(
        ValueError,
        match=r"anneal_strategy must be one of 'cos', 'linear', got 'cosine'; did you mean 'cos'\?",
    ):
        OneCycleLR(make_sgd(), eta_max=1.0, total_steps=10, anneal_strategy="cosine")


def test_one_cycle_is_for_lr_only():
    with pytest.raises(ValueError, match=r"param_name must be 'lr', got 'momentum'"):
        OneCycleParamScheduler(make_sgd(), "momentum", eta_max=1.0, total_steps=10)


def test_one_cycle_eta_max_per_group_length():
    with pytest.raises(
        ValueError,
        match=r"expected 2 values for eta_max, got 3: eta_max has 3 values but the optimizer has 2",
    ):
        OneCycleLR(make_sgd(groups=2), eta_max=[1, 2, 3], total_steps=10)


def test_one_cycle_eta_max_per_group_through_a_wrapper_with_base_settings():
    from treadle.runner.optim import OptimWrapper

    # The wrapper lists its base settings as a third group: it takes the last group's peak.
    wrapper = OptimWrapper(make_sgd(groups=2))
    OneCycleLR(wrapper, eta_max=[1.0, 0.5], total_steps=10, div_factor=10)
    assert [group["max_lr"] for group in wrapper.param_groups] == [1.0, 0.5, 0.5]
    lrs = [group["lr"] for group in wrapper.optimizer.param_groups]
    assert lrs == pytest.approx([0.1, 0.05])


def test_one_cycle_stepping_past_the_cycle():
    optimizer = make_sgd()
    scheduler = OneCycleLR(optimizer, eta_max=1.0, total_steps=3)
    step_values(optimizer, scheduler, 3)
    with pytest.raises(
        ValueError,
        match=r"OneCycleLR: Tried to step 5 times. The specified number of total steps is 3",
    ):
        optimizer.step()
        scheduler.step()


def test_one_cycle_with_a_rising_phase_of_no_length():
    # pct_start * total_steps = 1: the rise is over at step 0 (PyTorch divides by zero there).
    optimizer = make_sgd()
    scheduler = OneCycleLR(
        optimizer, eta_max=1.0, total_steps=10, pct_start=0.1, anneal_strategy="linear"
    )
    values = step_values(optimizer, scheduler, 10)
    assert values[0] == 1.0
    assert values[-1] == pytest.approx(1.0 / 25 / 1e4)


# --- ReduceOnPlateau ---


def test_plateau_unknown_rule_suggests_the_closest():
    with pytest.raises(
        ValueError,
        match=r"rule must be one of 'less', 'greater', got 'lesser'; "
        r"did you mean 'less'\?",
    ):
        ReduceOnPlateauLR(make_sgd(), rule="lesser")


def test_plateau_unknown_threshold_rule():
    with pytest.raises(
        ValueError, match=r"threshold_rule must be one of 'rel', 'abs', got 'relative'"
    ):
        ReduceOnPlateauLR(make_sgd(), threshold_rule="relative")


@pytest.mark.parametrize("factor", [1.0, 2])
def test_plateau_factor_range(factor):
    with pytest.raises(
        ValueError, match=rf"ReduceOnPlateauLR: Factor should be < 1.0, got {factor}"
    ):
        ReduceOnPlateauLR(make_sgd(), factor=factor)


def test_plateau_negative_factor_warns():
    with pytest.warns(UserWarning, match=r"factor=-0.5 is negative: each reduction flips the sign"):
        ReduceOnPlateauLR(make_sgd(), factor=-0.5)


def test_plateau_negative_threshold():
    with pytest.raises(ValueError, match=r"ReduceOnPlateauLR: threshold -1 should be >= 0."):
        ReduceOnPlateauLR(make_sgd(), threshold=-1)


def test_plateau_is_epoch_based_only():
    # MMEngine asserts: its users' tests catch an AssertionError, others a ValueError.
    for error in (ValueError, AssertionError):
        with pytest.raises(
            error, match=r"Now ReduceOnPlateauLR only support by_epoch=True: it is stepped"
        ):
            ReduceOnPlateauLR(make_sgd(), by_epoch=False)


def test_plateau_metrics_must_be_a_dict():
    with pytest.raises(
        TypeError,
        match=r"ReduceOnPlateauLR.step expects the dict of validation metrics: metrics type should "
        r"be dict, but got type <class 'float'>",
    ):
        ReduceOnPlateauLR(make_sgd()).step(0.5)


def test_plateau_missing_monitor_names_it_and_the_keys():
    scheduler = ReduceOnPlateauLR(make_sgd(), monitor="acc/top1")
    with pytest.raises(
        KeyError,
        match=r"monitor='acc/top1' is not among the validation metrics: Excepted key in "
        r"\['acc/top5', 'acc/top_1'\], but got key acc/top1 is not in dict; did you mean "
        r"'acc/top_1'",
    ):
        scheduler.step({"acc/top5": 0.9, "acc/top_1": 0.7})


def test_plateau_min_value_per_group_length():
    with pytest.raises(ValueError, match=r"expected 2 values for min_value, got 3"):
        ReduceOnPlateauLR(make_sgd(groups=2), min_value=[0.1, 0.2, 0.3])


def test_plateau_min_value_per_group_through_a_wrapper_with_base_settings():
    from treadle.runner.optim import OptimWrapper

    wrapper = OptimWrapper(make_sgd(groups=2))
    scheduler = ReduceOnPlateauLR(wrapper, min_value=[0.5, 0.2], patience=0)
    assert scheduler.min_values[:2] == [0.5, 0.2]
    scheduler.step({"loss": 1.0})
    scheduler.step({"loss": 1.0})
    assert [group["lr"] for group in wrapper.optimizer.param_groups] == [0.5, 0.2]


def test_plateau_cannot_be_converted_to_iterations():
    with pytest.raises(
        ValueError, match=r"cannot be converted to iteration-based: drop convert_to_iter_based"
    ):
        ReduceOnPlateauLR.build_iter_from_epoch(make_sgd(), epoch_length=10)


def test_plateau_counts_epochs_for_begin_and_takes_tensor_metrics():
    optimizer = make_sgd()
    scheduler = ReduceOnPlateauLR(optimizer, patience=0, begin=2)
    scheduler.step({"loss": torch.tensor(1.0)})
    scheduler.step({"loss": torch.tensor(1.0)})
    assert scheduler.get_last_value() == [1.0]  # before begin: metrics are ignored
    scheduler.step()
    scheduler.step()  # two training epochs later, it is active
    scheduler.step({"loss": torch.tensor(1.0)})
    scheduler.step({"loss": torch.tensor(1.0)})
    assert scheduler.get_last_value() == pytest.approx([0.1])
    assert type(scheduler.state_dict()["best"]) is float


def test_plateau_huge_metrics_still_improve():
    # MMEngine starts from best=1e9, so a "less" metric above it never counts as better.
    optimizer = make_sgd()
    scheduler = ReduceOnPlateauLR(optimizer, patience=0)
    scheduler.step({"loss": 5e9})
    assert scheduler.best == 5e9 and scheduler.get_last_value() == [1.0]


def test_plateau_eps_skips_tiny_reductions():
    optimizer = make_sgd(lr=1e-9)
    scheduler = ReduceOnPlateauLR(optimizer, patience=0, eps=1e-8)
    scheduler.step({"loss": 1.0})
    scheduler.step({"loss": 1.0})
    assert scheduler.get_last_value() == [1e-9]
