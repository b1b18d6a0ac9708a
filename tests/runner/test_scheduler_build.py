"""Schedulers built from configs: the registry, convert_to_iter_based, and the check that an
iteration-based loop gets no epoch-based scheduler."""

from __future__ import annotations

import pytest
import torch
from runner_toys import step_values

from treadle.runner.optim import (
    CosineAnnealingLR,
    LinearLR,
    MultiStepLR,
    OptimWrapper,
    ReduceOnPlateauLR,
    StepLR,
    check_schedulers_match_loop,
)
from treadle.runner.optim import scheduler as scheduler_module
from treadle.runner.registry import PARAM_SCHEDULERS


def make_wrapper() -> OptimWrapper:
    return OptimWrapper(torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0, momentum=0.9))


def build(cfg, epoch_length=10):
    return PARAM_SCHEDULERS.build(
        cfg, default_args=dict(optimizer=make_wrapper(), epoch_length=epoch_length)
    )


def test_every_scheduler_is_registered():
    names = [
        name
        for name in scheduler_module.__all__
        if name[0].isupper() and "Mixin" not in name and name != "INF"
    ]
    assert len(names) == 29
    for name in names:
        assert PARAM_SCHEDULERS.get(name) is getattr(scheduler_module, name)


def test_build_by_name_without_conversion():
    scheduler = PARAM_SCHEDULERS.build(
        dict(type="StepLR", step_size=3, by_epoch=True), default_args=dict(optimizer=make_wrapper())
    )
    assert isinstance(scheduler, StepLR) and scheduler.step_size == 3 and scheduler.by_epoch


def test_build_without_conversion_ignores_epoch_length():
    scheduler = build(dict(type="StepLR", step_size=3, by_epoch=True))
    assert scheduler.step_size == 3


def test_unknown_name_names_the_closest():
    with pytest.raises(KeyError, match=r"MultiStepLR"):
        build(dict(type="MultStepLR", milestones=[1]))


@pytest.mark.parametrize(
    ("cfg", "attr", "want"),
    [
        (dict(type="StepLR", step_size=2), "step_size", 20),
        (dict(type="MultiStepLR", milestones=[1, 3]), "milestones", {10: 1, 30: 1}),
        (dict(type="CosineAnnealingLR", T_max=5), "T_max", 50),
        (dict(type="CosineAnnealingLR", end=4), "T_max", 40),
        (dict(type="OneCycleLR", eta_max=1.0, total_steps=3), "total_steps", 30),
        (
            dict(type="CosineRestartLR", periods=[1, 2], restart_weights=[1, 1], eta_min=0.0),
            "cumulative_periods",
            [10, 30],
        ),
        (dict(type="PolyMomentum", begin=1, end=3), "total_iters", 19),
        (dict(type="LinearLR", begin=0.5, end=1), "begin", 5),
    ],
)
def test_convert_to_iter_based_scales_epoch_arguments(cfg, attr, want):
    scheduler = build({**cfg, "convert_to_iter_based": True})
    assert scheduler.by_epoch is False
    assert getattr(scheduler, attr) == want


def test_converted_schedule_values():
    scheduler = build(
        dict(type="MultiStepLR", milestones=[1], gamma=0.5, convert_to_iter_based=True),
        epoch_length=4,
    )
    optimizer = scheduler.optimizer
    assert step_values(optimizer, scheduler, 6) == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5]
    assert scheduler.end == scheduler_module.INF  # an unbounded end stays unbounded


def test_conversion_of_an_iteration_based_config_is_refused():
    with pytest.raises(
        ValueError,
        match=r"StepLR.build_iter_from_epoch: only epoch-based kwargs whose `by_epoch=True` "
        r"can be converted to iter-based: convert_to_iter_based=True converts epoch-based "
        r"arguments, but by_epoch=False",
    ):
        build(dict(type="StepLR", step_size=1, by_epoch=False, convert_to_iter_based=True))


@pytest.mark.parametrize("epoch_length", [0, -1, None, 2.5])
def test_conversion_needs_a_positive_epoch_length(epoch_length):
    with pytest.raises(AssertionError, match=r"`epoch_length` must be a positive integer, but got"):
        build(
            dict(type="StepLR", step_size=1, convert_to_iter_based=True), epoch_length=epoch_length
        )


def test_plateau_conversion_is_refused():
    with pytest.raises(ValueError, match=r"ReduceOnPlateauLR .* cannot be converted"):
        build(dict(type="ReduceOnPlateauLR", convert_to_iter_based=True))


# --- check_schedulers_match_loop ---


def test_epoch_based_scheduler_in_iteration_loop_is_refused():
    optimizer = make_wrapper()
    schedulers = [
        LinearLR(optimizer, start_factor=0.1, end=100, by_epoch=False),
        MultiStepLR(optimizer, milestones=[8, 11]),
    ]
    with pytest.raises(
        ValueError,
        match=r"param_scheduler\[1\] \(MultiStepLR\) has by_epoch=True, but "
        r"the train loop is iteration-based.*Set "
        r"convert_to_iter_based=True",
    ):
        check_schedulers_match_loop(schedulers, by_epoch_loop=False)
    check_schedulers_match_loop(schedulers, by_epoch_loop=True)  # fine in an epoch loop


def test_loop_check_per_optimizer_dict_and_plateau_exempt():
    optimizer = make_wrapper()
    check_schedulers_match_loop(
        {
            "gen": [CosineAnnealingLR(optimizer, T_max=10, by_epoch=False)],
            "disc": [ReduceOnPlateauLR(optimizer)],
        },
        by_epoch_loop=False,
    )
    with pytest.raises(ValueError, match=r"param_scheduler\['disc'\]\[0\] \(StepLR\)"):
        check_schedulers_match_loop({"disc": [StepLR(optimizer, step_size=1)]}, by_epoch_loop=False)


def test_converted_scheduler_passes_the_loop_check():
    scheduler = build(dict(type="StepLR", step_size=1, convert_to_iter_based=True))
    check_schedulers_match_loop([scheduler], by_epoch_loop=False)
    assert scheduler.by_epoch is False
