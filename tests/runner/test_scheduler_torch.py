"""The learning-rate schedulers against PyTorch's own torch.optim.lr_scheduler, step by step.

Both are stepped the same way (``optimizer.step()``, then ``scheduler.step()``) on separate
but identical optimizers, for 100 steps, with two param groups of different learning rates.
"""

from __future__ import annotations

import pytest
import torch
from torch.optim import lr_scheduler as torch_sched

from treadle.runner.optim import scheduler as ours

STEPS = 100


def make_sgd() -> torch.optim.SGD:
    weight = torch.nn.Parameter(torch.zeros(2))
    bias = torch.nn.Parameter(torch.zeros(1))
    return torch.optim.SGD([{"params": [weight]}, {"params": [bias], "lr": 0.05}], lr=0.1)


def run(optimizer: torch.optim.Optimizer, scheduler, steps: int = STEPS) -> list[list[float]]:
    values = []
    for _ in range(steps):
        values.append([group["lr"] for group in optimizer.param_groups])
        optimizer.step()
        scheduler.step()
    return values


# The arguments both OneCycleLRs take under the same names.
THREE_PHASE = dict(
    total_steps=STEPS,
    pct_start=0.25,
    anneal_strategy="linear",
    three_phase=True,
    div_factor=10,
    final_div_factor=100,
)

CASES = {
    "StepLR": (
        lambda o: torch_sched.StepLR(o, step_size=7, gamma=0.5),
        lambda o: ours.StepLR(o, step_size=7, gamma=0.5),
    ),
    "MultiStepLR": (
        lambda o: torch_sched.MultiStepLR(o, milestones=[10, 30, 30, 60], gamma=0.3),
        lambda o: ours.MultiStepLR(o, milestones=[10, 30, 30, 60], gamma=0.3),
    ),
    "ExponentialLR": (
        lambda o: torch_sched.ExponentialLR(o, gamma=0.95),
        lambda o: ours.ExponentialLR(o, gamma=0.95),
    ),
    "CosineAnnealingLR": (
        # T_max shorter than the run: the schedule climbs back after its bottom.
        lambda o: torch_sched.CosineAnnealingLR(o, T_max=30, eta_min=0.001),
        lambda o: ours.CosineAnnealingLR(o, T_max=30, eta_min=0.001),
    ),
    "LinearLR": (
        lambda o: torch_sched.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=20),
        lambda o: ours.LinearLR(o, start_factor=0.1, end_factor=0.9, end=21),
    ),
    "ConstantLR": (
        lambda o: torch_sched.ConstantLR(o, factor=0.25, total_iters=10),
        lambda o: ours.ConstantLR(o, factor=0.25, end=11),
    ),
    "PolyLR": (
        lambda o: torch_sched.PolynomialLR(o, total_iters=50, power=2.0),
        lambda o: ours.PolyLR(o, power=2.0, end=51),
    ),
    "OneCycleLR-cos": (
        lambda o: torch_sched.OneCycleLR(
            o, max_lr=[1.0, 0.5], total_steps=STEPS, cycle_momentum=False
        ),
        lambda o: ours.OneCycleLR(o, eta_max=[1.0, 0.5], total_steps=STEPS),
    ),
    "OneCycleLR-linear-three-phase": (
        lambda o: torch_sched.OneCycleLR(o, max_lr=1.0, cycle_momentum=False, **THREE_PHASE),
        lambda o: ours.OneCycleLR(o, eta_max=1.0, **THREE_PHASE),
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_values_as_torch(name):
    make_torch, make_ours = CASES[name]
    torch_opt, our_opt = make_sgd(), make_sgd()
    expected = run(torch_opt, make_torch(torch_opt))
    got = run(our_opt, make_ours(our_opt))
    assert len(got) == STEPS
    for step, (want, have) in enumerate(zip(expected, got, strict=True)):
        assert have == pytest.approx(want, rel=1e-12, abs=1e-15), f"step {step}"


def test_values_change_at_all():
    # Guards the comparison above against two schedules that both never move.
    optimizer = make_sgd()
    values = run(optimizer, ours.StepLR(optimizer, step_size=7, gamma=0.5), steps=15)
    assert values[0] == [0.1, 0.05]
    assert values[14] == pytest.approx([0.025, 0.0125])


def plateau_lrs(metrics, monitor: str, torch_kwargs, our_kwargs) -> list[list[float]]:
    """Step PyTorch's ReduceLROnPlateau and ours with the same metrics, one epoch at a time, and
    check that they agree; the learning rates after each epoch."""
    torch_opt, our_opt = make_sgd(), make_sgd()
    theirs = torch_sched.ReduceLROnPlateau(torch_opt, **torch_kwargs)
    mine = ours.ReduceOnPlateauLR(our_opt, monitor=monitor, **our_kwargs)
    history = []
    for epoch, metric in enumerate(metrics):
        torch_opt.step()
        our_opt.step()
        theirs.step(metric)
        mine.step()  # the end of a training epoch: counted only
        mine.step({monitor: metric})
        want = [group["lr"] for group in torch_opt.param_groups]
        assert mine.get_last_value() == pytest.approx(want, rel=1e-12), f"epoch {epoch}"
        history.append(want)
    return history


def test_reduce_on_plateau_same_as_torch():
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9] * 8
    history = plateau_lrs(
        metrics,
        "loss",
        dict(mode="min", factor=0.5, patience=2, threshold=0.01, cooldown=1, min_lr=0.01),
        dict(rule="less", factor=0.5, patience=2, threshold=0.01, cooldown=1, min_value=0.01),
    )
    seen = {tuple(values) for values in history}
    assert len(seen) > 3  # it did reduce, several times, down to the floor
    assert min(min(values) for values in seen) == pytest.approx(0.01)


def test_reduce_on_plateau_greater_abs_same_as_torch():
    metrics = [0.5, 0.6, 0.6, 0.61, 0.6, 0.6, 0.7, 0.7, 0.7, 0.7] * 5
    history = plateau_lrs(
        metrics,
        "acc",
        dict(mode="max", factor=0.1, patience=1, threshold=0.05, threshold_mode="abs"),
        dict(rule="greater", factor=0.1, patience=1, threshold=0.05, threshold_rule="abs"),
    )
    assert history[-1][0] < 1e-6
