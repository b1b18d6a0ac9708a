"""Momentum schedulers: SGD's momentum, Adam's betas[0], and optimizers without momentum."""

from __future__ import annotations

import pytest
import torch
from runner_toys import step_values

from treadle.runner.optim import (
    ConstantMomentum,
    CosineAnnealingMomentum,
    CosineRestartMomentum,
    ExponentialMomentum,
    LinearMomentum,
    MultiStepMomentum,
    OptimWrapper,
    PolyMomentum,
    ReduceOnPlateauMomentum,
    StepLR,
    StepMomentum,
)


def param() -> torch.nn.Parameter:
    return torch.nn.Parameter(torch.zeros(2))


def test_sgd_momentum_is_scheduled_and_lr_untouched():
    optimizer = torch.optim.SGD([param()], lr=0.1, momentum=0.9)
    scheduler = StepMomentum(optimizer, step_size=1, gamma=0.5)
    optimizer.step()
    scheduler.step()
    assert optimizer.param_groups[0]["momentum"] == 0.45
    assert optimizer.param_groups[0]["lr"] == 0.1
    assert scheduler.use_betas is False


@pytest.mark.parametrize("optimizer_cls", [torch.optim.Adam, torch.optim.AdamW])
def test_adam_betas0_follows_the_momentum(optimizer_cls):
    optimizer = optimizer_cls([param()], lr=0.1, betas=(0.9, 0.99))
    scheduler = LinearMomentum(OptimWrapper(optimizer), start_factor=0.5, end=3)
    assert optimizer.param_groups[0]["betas"] == (0.45, 0.99)
    optimizer.step()
    scheduler.step()
    assert optimizer.param_groups[0]["betas"] == pytest.approx((0.675, 0.99))
    assert optimizer.param_groups[0]["momentum"] == pytest.approx(0.675)
    assert scheduler.use_betas is True


def test_two_momentum_schedulers_on_adam_chain():
    optimizer = torch.optim.Adam([param()], lr=0.1, betas=(0.8, 0.999))
    first = ExponentialMomentum(optimizer, gamma=0.5)
    second = MultiStepMomentum(optimizer, milestones=[1], gamma=0.5)
    optimizer.step()
    first.step()
    second.step()
    # 0.8 x 0.5 (exponential) x 0.5 (milestone 1): each starts from what the other left.
    assert optimizer.param_groups[0]["betas"] == (0.2, 0.999)


def test_plateau_momentum_updates_betas():
    optimizer = torch.optim.Adam([param()], lr=0.1, betas=(0.9, 0.999))
    scheduler = ReduceOnPlateauMomentum(optimizer, patience=0, factor=0.5)
    scheduler.step({"loss": 1.0})
    scheduler.step({"loss": 2.0})
    assert optimizer.param_groups[0]["betas"] == (0.45, 0.999)


@pytest.mark.parametrize(
    "make",
    [
        lambda o: ConstantMomentum(o, factor=0.5, end=5),
        lambda o: CosineAnnealingMomentum(o, T_max=5),
        lambda o: CosineRestartMomentum(o, periods=[5], restart_weights=[1], eta_min=0.0),
        lambda o: PolyMomentum(o, end=5),
        lambda o: StepMomentum(o, step_size=2),
    ],
)
def test_every_momentum_form_moves_the_momentum(make):
    optimizer = torch.optim.SGD([param()], lr=0.1, momentum=0.9)
    scheduler = make(optimizer)
    assert len(set(step_values(optimizer, scheduler, 5, key="momentum"))) > 1
    assert scheduler.param_name == "momentum"


def test_optimizer_without_momentum_is_refused():
    optimizer = torch.optim.Adagrad([param()], lr=0.1)
    with pytest.raises(
        ValueError,
        match=r"StepMomentum: optimizer must support momentum when using momentum scheduler, "
        r"but Adagrad has neither 'momentum' nor 'betas' in its defaults",
    ):
        StepMomentum(optimizer, step_size=1)


def test_momentum_form_with_wrong_optimizer_type():
    with pytest.raises(TypeError, match=r"StepMomentum: ``optimizer`` should be an Optimizer"):
        StepMomentum(object(), step_size=1)


def test_lr_form_rejects_param_name():
    optimizer = torch.optim.SGD([param()], lr=0.1)
    with pytest.raises(TypeError, match=r"param_name"):
        StepLR(optimizer, param_name="lr", step_size=1)
