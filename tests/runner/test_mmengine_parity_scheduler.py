"""treadle.runner.optim's parameter schedulers against MMEngine 0.10's, step by step: every
scheduler for 100 steps, epoch- and iteration-based loops, convert_to_iter_based, chaining,
optimizer wrappers with several groups, and resuming from a state dict mid-way (ours and
MMEngine's).

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...``.
"""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("mmengine")

import mmengine.optim as mm_optim
import mmengine.registry as mm_registry
import torch

import treadle.runner.optim as tr_optim
import treadle.runner.registry as tr_registry

SIDES = {
    "mmengine": (mm_optim, mm_registry.PARAM_SCHEDULERS),
    "treadle": (tr_optim, tr_registry.PARAM_SCHEDULERS),
}
EPOCHS, EPOCH_LENGTH = 10, 10
STEPS = EPOCHS * EPOCH_LENGTH

# Every scheduler with arguments that make its schedule move within 100 steps (counted in
# steps: epochs for an epoch-based loop, iterations for an iteration-based one).
GENERIC = {
    "Constant": dict(factor=0.5, end=40),
    "CosineAnnealing": dict(T_max=30, eta_min_ratio=0.05),
    "CosineRestart": dict(periods=[30, 30, 40], restart_weights=[1, 0.5, 0.25], eta_min=0.01),
    "Exponential": dict(gamma=0.97, begin=5, end=80),
    "Linear": dict(start_factor=0.1, end_factor=0.5, begin=3, end=50),
    "MultiStep": dict(milestones=[10, 30, 30, 70], gamma=0.5),
    "Poly": dict(eta_min=0.001, power=0.9, end=90),
    "Step": dict(step_size=15, gamma=0.7),
}
CASES = (
    [(f"{family}LR", kwargs) for family, kwargs in GENERIC.items()]
    + [(f"{family}Momentum", kwargs) for family, kwargs in GENERIC.items()]
    + [
        (f"{family}ParamScheduler", {"param_name": "weight_decay", **kw})
        for family, kw in GENERIC.items()
    ]
    + [
        ("OneCycleLR", dict(eta_max=[0.5, 0.2], total_steps=STEPS)),
        (
            "OneCycleLR",
            dict(eta_max=0.5, end=STEPS, pct_start=0.4, anneal_strategy="linear", three_phase=True),
        ),
        (
            "OneCycleParamScheduler",
            dict(param_name="lr", eta_max=1.0, total_steps=STEPS, div_factor=5.0),
        ),
    ]
)
# Epoch-based versions for convert_to_iter_based (their steps are epochs: 10 of them).
CONVERTED = [
    ("LinearLR", dict(start_factor=0.2, end=2)),
    ("MultiStepLR", dict(milestones=[3, 6, 6], gamma=0.5)),
    ("StepMomentum", dict(step_size=3, gamma=0.8)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.001, begin=1)),
    ("CosineAnnealingParamScheduler", dict(param_name="weight_decay", eta_min=0.0, end=8)),
    ("CosineRestartLR", dict(periods=[3, 7], restart_weights=[1, 0.5], eta_min_ratio=0.1)),
    ("ExponentialLR", dict(gamma=0.9, begin=0.5, end=9.5)),
    ("PolyLR", dict(power=2.0, end=10)),
    ("ConstantMomentum", dict(factor=0.5, end=3)),
    ("OneCycleLR", dict(eta_max=0.3, total_steps=EPOCHS)),
]


def make_optimizer(kind: str):
    weight = torch.nn.Parameter(torch.ones(3))
    bias = torch.nn.Parameter(torch.ones(1))
    groups = [{"params": [weight]}, {"params": [bias], "lr": 0.05, "weight_decay": 0.02}]
    if kind == "adam":
        return torch.optim.Adam(groups, lr=0.1, betas=(0.9, 0.99), weight_decay=0.01)
    return torch.optim.SGD(groups, lr=0.1, momentum=0.9, weight_decay=0.01)


def snapshot(optimizer) -> list:
    keys = ("lr", "momentum", "betas", "weight_decay")
    return [tuple(group.get(key) for key in keys) for group in optimizer.param_groups]


def build(side: str, cfg: dict, optimizer, convert: bool = False):
    registry = SIDES[side][1]
    cfg = dict(cfg)
    if convert:
        return registry.build(
            {**cfg, "convert_to_iter_based": True},
            default_args=dict(optimizer=optimizer, epoch_length=EPOCH_LENGTH),
        )
    return registry.build(cfg, default_args=dict(optimizer=optimizer))


def run_loop(schedulers, optimizer, iteration_based: list[bool], steps_per_epoch=EPOCH_LENGTH):
    """A training loop: the optimizer steps every iteration; iteration-based schedulers step
    after each iteration, epoch-based ones after each epoch. One snapshot per iteration."""
    values = []
    for _ in range(EPOCHS):
        for _ in range(steps_per_epoch):
            values.append(snapshot(optimizer))
            optimizer.step()
            for scheduler, per_iter in zip(schedulers, iteration_based, strict=True):
                if per_iter:
                    scheduler.step()
        for scheduler, per_iter in zip(schedulers, iteration_based, strict=True):
            if not per_iter:
                scheduler.step()
    return values


def run_steps(scheduler, optimizer, steps: int = STEPS) -> list:
    values = []
    for _ in range(steps):
        values.append(snapshot(optimizer))
        optimizer.step()
        scheduler.step()
    return values


def kind_for(name: str) -> list[str]:
    return ["sgd", "adam"] if "Momentum" in name else ["sgd"]


PARAMS = [
    pytest.param(name, kwargs, kind, id=f"{name}-{index}-{kind}")
    for index, (name, kwargs) in enumerate(CASES)
    for kind in kind_for(name)
]


@pytest.mark.parametrize(("name", "kwargs", "kind"), PARAMS)
@pytest.mark.parametrize("by_epoch", [False, True])
def test_every_scheduler_same_values(name, kwargs, kind, by_epoch):
    def run(side):
        optimizer = make_optimizer(kind)
        scheduler = build(side, dict(type=name, by_epoch=by_epoch, **kwargs), optimizer)
        values = run_steps(scheduler, optimizer)
        return values, scheduler.get_last_value()

    mm_values, tr_values = run("mmengine"), run("treadle")
    assert len(tr_values[0]) == STEPS
    assert tr_values == mm_values
    assert len({str(v) for v in tr_values[0]}) >= 2  # the schedule did move


def test_every_scheduler_class_is_covered():
    covered = (
        {name for name, _ in CASES}
        | {name for name, _ in CONVERTED}
        | {"ReduceOnPlateauLR", "ReduceOnPlateauMomentum", "ReduceOnPlateauParamScheduler"}
    )
    assert covered == set(mm_optim.scheduler.__all__) - {"_ParamScheduler"}
    assert covered <= set(tr_optim.__all__)


@pytest.mark.parametrize(("name", "kwargs"), CONVERTED, ids=[name for name, _ in CONVERTED])
def test_convert_to_iter_based_same_values(name, kwargs):
    def run(side):
        optimizer = make_optimizer("adam" if "Momentum" in name else "sgd")
        scheduler = build(side, dict(type=name, **kwargs), optimizer, convert=True)
        assert scheduler.by_epoch is False
        return run_loop([scheduler], optimizer, [True]), scheduler.begin, scheduler.end

    assert run("treadle") == run("mmengine")


@pytest.mark.parametrize(("name", "kwargs"), CONVERTED[:6], ids=[name for name, _ in CONVERTED[:6]])
def test_epoch_based_in_epoch_loop_same_values(name, kwargs):
    def run(side):
        optimizer = make_optimizer("adam" if "Momentum" in name else "sgd")
        scheduler = build(side, dict(type=name, **kwargs), optimizer)
        return run_loop([scheduler], optimizer, [False])

    assert run("treadle") == run("mmengine")


CHAINS = {
    "warmup-iter+multistep-epoch": (
        [
            dict(type="LinearLR", start_factor=0.001, by_epoch=False, begin=0, end=25),
            dict(type="MultiStepLR", milestones=[4, 7], gamma=0.1, by_epoch=True),
        ],
        [True, False],
    ),
    "warmup+multistep-begin5": (
        [
            dict(type="LinearLR", start_factor=0.1, begin=0, end=5, by_epoch=False),
            dict(type="MultiStepLR", milestones=[10, 40], begin=5, by_epoch=False),
        ],
        [True, True],
    ),
    "warmup+cosine-converted": (
        [
            dict(type="LinearLR", start_factor=0.01, end=1, convert_to_iter_based=True),
            dict(
                type="CosineAnnealingLR",
                T_max=9,
                begin=1,
                end=10,
                eta_min_ratio=0.01,
                convert_to_iter_based=True,
            ),
        ],
        [True, True],
    ),
    "constant+poly+momentum": (
        [
            dict(type="ConstantLR", factor=0.25, end=20, by_epoch=False),
            dict(type="PolyLR", power=1.5, end=100, by_epoch=False),
            dict(type="CosineAnnealingMomentum", T_max=50, eta_min=0.8, by_epoch=False),
        ],
        [True, True, True],
    ),
    "restart+step": (
        [
            dict(
                type="CosineRestartLR",
                periods=[50, 50],
                restart_weights=[1, 0.5],
                eta_min=0.0,
                by_epoch=False,
            ),
            dict(type="StepLR", step_size=20, gamma=0.5, by_epoch=False),
        ],
        [True, True],
    ),
}


@pytest.mark.parametrize("chain", sorted(CHAINS))
def test_chained_schedulers_same_values(chain):
    cfgs, per_iter = CHAINS[chain]

    def run(side):
        optimizer = make_optimizer("sgd")
        schedulers = []
        for cfg in cfgs:
            cfg = dict(cfg)
            do_convert = cfg.pop("convert_to_iter_based", False)
            schedulers.append(build(side, cfg, optimizer, convert=do_convert))
        return run_loop(schedulers, optimizer, per_iter)

    mm_values, tr_values = run("mmengine"), run("treadle")
    assert tr_values == mm_values


@pytest.mark.parametrize("wrapped", ["OptimWrapper"])
def test_through_each_sides_optim_wrapper_with_several_groups(wrapped):
    def run(side):
        module = SIDES[side][0]
        optimizer = make_optimizer("sgd")
        wrapper = getattr(module, wrapped)(optimizer)
        schedulers = [
            build(side, dict(type="LinearLR", start_factor=0.1, end=10, by_epoch=False), wrapper),
            build(
                side,
                dict(type="CosineAnnealingLR", T_max=90, begin=10, end=100, by_epoch=False),
                wrapper,
            ),
            build(
                side,
                dict(type="ReduceOnPlateauMomentum", patience=1, min_value=[0.5, 0.6]),
                wrapper,
            ),
        ]
        values = []
        for step in range(STEPS):
            values.append((snapshot(optimizer), [dict(g) for g in wrapper.param_groups[2:]]))
            optimizer.step()
            schedulers[0].step()
            schedulers[1].step()
            if step % 10 == 9:
                schedulers[2].step()
                schedulers[2].step({"loss": 1.0})
        for extra in values[-1][1]:
            extra.pop("params")
        return values[:-1], values[-1][1]

    assert run("treadle") == run("mmengine")


PLATEAU = {
    "less-rel": dict(
        rule="less", factor=0.5, patience=2, threshold=0.01, cooldown=1, min_value=0.001
    ),
    "greater-abs": dict(
        rule="greater", factor=0.2, patience=1, threshold=0.05, threshold_rule="abs", monitor="acc"
    ),
    "begin-end": dict(patience=0, begin=3, end=12),
}
PLATEAU_METRICS = [1.0, 0.9, 0.95, 0.95, 0.95, 0.89, 0.9, 0.9, 0.9, 0.9, 0.5, 0.6, 0.6, 0.7]


@pytest.mark.parametrize("variant", sorted(PLATEAU))
@pytest.mark.parametrize(
    "name", ["ReduceOnPlateauLR", "ReduceOnPlateauMomentum", "ReduceOnPlateauParamScheduler"]
)
def test_reduce_on_plateau_same_values(name, variant):
    kwargs = dict(PLATEAU[variant])
    if name == "ReduceOnPlateauParamScheduler":
        kwargs["param_name"] = "weight_decay"
    monitor = kwargs.get("monitor", "loss")

    def run(side, kind):
        optimizer = make_optimizer(kind)
        scheduler = build(side, dict(type=name, **kwargs), optimizer)
        values = []
        for epoch in range(30):
            optimizer.step()
            scheduler.step()
            metric = PLATEAU_METRICS[epoch % len(PLATEAU_METRICS)]
            scheduler.step({monitor: metric, "other": 0.0})
            values.append(snapshot(optimizer))
        return values, scheduler.num_bad_epochs, scheduler.cooldown_counter, scheduler.last_step

    for kind in kind_for(name):
        assert run("treadle", kind) == run("mmengine", kind)


RESUMABLE = [
    ("MultiStepLR", dict(milestones=[10, 30, 30, 70], gamma=0.5)),
    ("OneCycleLR", dict(eta_max=0.5, total_steps=STEPS, anneal_strategy="linear")),
    (
        "CosineRestartMomentum",
        dict(periods=[30, 30, 40], restart_weights=[1, 0.5, 0.25], eta_min=0.01),
    ),
    ("LinearLR", dict(start_factor=0.1, end=60)),
    ("ReduceOnPlateauLR", dict(patience=1)),
]


@pytest.mark.parametrize("source", ["treadle", "mmengine"])
@pytest.mark.parametrize(("name", "kwargs"), RESUMABLE, ids=[name for name, _ in RESUMABLE])
def test_state_dict_round_trip_mid_way(name, kwargs, source):
    """Stop at step 40, resume from the saved states (treadle's or MMEngine's) in treadle,
    and get MMEngine's uninterrupted values."""
    kind = "adam" if "Momentum" in name else "sgd"
    plateau = "Plateau" in name

    def advance(scheduler, optimizer, steps, offset=0):
        values = []
        for step in range(offset, offset + steps):
            values.append(snapshot(optimizer))
            optimizer.step()
            scheduler.step()
            if plateau:
                scheduler.step({"loss": PLATEAU_METRICS[step % len(PLATEAU_METRICS)]})
        return values

    optimizer = make_optimizer(kind)
    reference = advance(build("mmengine", dict(type=name, **kwargs), optimizer), optimizer, STEPS)

    first_opt = make_optimizer(kind)
    first = build(source, dict(type=name, **kwargs), first_opt)
    head = advance(first, first_opt, 40)
    saved_scheduler, saved_optimizer = first.state_dict(), first_opt.state_dict()

    resumed_opt = make_optimizer(kind)
    resumed = build("treadle", dict(type=name, **kwargs), resumed_opt)
    resumed_opt.load_state_dict(saved_optimizer)
    resumed.load_state_dict(saved_scheduler)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tail = advance(resumed, resumed_opt, STEPS - 40, offset=40)
    assert head + tail == reference


def outcome(function):
    try:
        function()
        return "ok"
    except Exception as error:
        return type(error).__name__


MISTAKES = {
    # Same error type on both sides.
    "begin>=end": (dict(type="StepLR", step_size=1, begin=5, end=5), "ValueError", "ValueError"),
    "unknown rule": (dict(type="ReduceOnPlateauLR", rule="lesser"), "ValueError", "ValueError"),
    "factor>=1": (dict(type="ReduceOnPlateauLR", factor=1.0), "ValueError", "ValueError"),
    "missing param": (
        dict(type="StepParamScheduler", param_name="nope", step_size=1),
        "KeyError",
        "KeyError",
    ),
    # Deliberate: MMEngine asserts, or accepts a schedule that cannot work.
    "one cycle without length": (dict(type="OneCycleLR", eta_max=1.0), "ok", "ValueError"),
    "one cycle momentum": (
        dict(type="OneCycleParamScheduler", param_name="momentum", eta_max=1.0, total_steps=5),
        "AssertionError",
        "SchedulerArgumentError",
    ),
    "eta_min and ratio": (
        dict(type="CosineAnnealingLR", eta_min=0.1, eta_min_ratio=0.1),
        "AssertionError",
        "SchedulerArgumentError",
    ),
    "plateau per iteration": (
        dict(type="ReduceOnPlateauLR", by_epoch=False),
        "AssertionError",
        "SchedulerArgumentError",
    ),
    "step_size 0": (dict(type="StepLR", step_size=0), "ZeroDivisionError", "ValueError"),
}


@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_mistakes(mistake):
    # SchedulerArgumentError is a ValueError and, where MMEngine asserts, an AssertionError.
    cfg, mm_error, tr_error = MISTAKES[mistake]

    def run(side):
        def call():
            optimizer = make_optimizer("sgd")
            scheduler = build(side, cfg, optimizer)
            optimizer.step()
            scheduler.step()

        return outcome(call)

    assert (run("mmengine"), run("treadle")) == (mm_error, tr_error)
