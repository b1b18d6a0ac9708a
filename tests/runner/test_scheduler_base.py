"""_ParamScheduler's mechanics through the public schedulers: the optimizer it accepts, the
errors a user can trigger, chaining, state dicts, the call-order warning, verbose logging."""

from __future__ import annotations

import io
import logging
import math
import warnings

import pytest
import torch
from runner_toys import make_sgd, step_values

from treadle.logging import MMLogger
from treadle.runner.optim import (
    ConstantParamScheduler,
    CosineAnnealingLR,
    ExponentialLR,
    LinearLR,
    MultiStepLR,
    OneCycleLR,
    OptimWrapper,
    OptimWrapperDict,
    StepLR,
    _ParamScheduler,
)
from treadle.runner.optim.scheduler import INF

# --- what the scheduler accepts ---


class DuckWrapper:
    """Not an OptimWrapper, but it has what a scheduler needs."""

    def __init__(self, optimizer):
        self.optimizer = optimizer

    @property
    def param_groups(self):
        return self.optimizer.param_groups


@pytest.mark.parametrize("wrap", [lambda o: o, OptimWrapper, DuckWrapper])
def test_accepts_optimizer_wrapper_and_duck_type(wrap):
    optimizer = make_sgd()
    scheduler = ExponentialLR(wrap(optimizer), gamma=0.5)
    for _ in range(3):
        optimizer.step()
        scheduler.step()
    assert optimizer.param_groups[0]["lr"] == 0.125
    assert scheduler.get_last_value() == [0.125]
    assert optimizer.param_groups[0]["initial_lr"] == 1.0


@pytest.mark.parametrize("bad", [torch.nn.Linear(1, 1), [1, 2], None, "sgd"])
def test_wrong_optimizer_type_is_a_type_error(bad):
    with pytest.raises(TypeError, match=r"StepLR: ``optimizer`` should be an Optimizer, but got"):
        StepLR(bad, step_size=1)


def test_optim_wrapper_dict_asks_for_one_scheduler_per_key():
    wrappers = OptimWrapperDict(gen=OptimWrapper(make_sgd()), disc=OptimWrapper(make_sgd()))
    with pytest.raises(TypeError, match=r"holds several optimizers; build one scheduler per key"):
        StepLR(wrappers, step_size=1)
    StepLR(wrappers["gen"], step_size=1)  # per key it works


def test_param_name_missing_names_it_and_the_closest_key():
    with pytest.raises(
        KeyError,
        match=r"param_groups\[0\] of SGD has no 'wieght_decay'.*"
        r"did you mean 'weight_decay'",
    ):
        ConstantParamScheduler(make_sgd(), "wieght_decay", factor=0.5)


def test_begin_not_before_end_is_a_value_error_naming_both():
    with pytest.raises(
        ValueError, match=r"StepLR: end should be larger than begin, but got begin=5, end=5"
    ):
        StepLR(make_sgd(), step_size=1, begin=5, end=5)
    with pytest.raises(ValueError, match=r"begin=7, end=3"):
        LinearLR(make_sgd(), begin=7, end=3)


@pytest.mark.parametrize("last_step", [-2, 1.5, True])
def test_bad_last_step(last_step):
    # ValueError, and the AssertionError MMEngine raises here.
    with pytest.raises(AssertionError, match=r"last_step must be an int >= -1"):
        StepLR(make_sgd(), step_size=1, last_step=last_step)


def test_resume_with_last_step_needs_initial_values():
    with pytest.raises(
        KeyError,
        match=r"param 'initial_lr' is not specified in param_groups\[0\] of SGD when resuming",
    ):
        StepLR(make_sgd(), step_size=1, last_step=4)
    optimizer = make_sgd(lr=0.25)
    optimizer.param_groups[0]["initial_lr"] = 1.0
    scheduler = StepLR(optimizer, step_size=2, gamma=0.5, last_step=3)
    # The step taken at construction is step 4, a multiple of step_size: one more decay.
    assert scheduler.last_step == 4
    assert scheduler.base_values == [1.0]
    assert optimizer.param_groups[0]["lr"] == 0.125


def test_base_class_needs_get_value():
    with pytest.raises(NotImplementedError, match=r"_ParamScheduler must implement _get_value"):
        _ParamScheduler(make_sgd(), "lr")


def test_first_scheduler_sets_initial_value_later_ones_keep_it():
    optimizer = make_sgd(lr=0.5)
    ExponentialLR(optimizer, gamma=0.5)
    optimizer.param_groups[0]["lr"] = 0.3
    second = StepLR(optimizer, step_size=1)
    assert second.base_values == [0.5]
    assert optimizer.param_groups[0]["initial_lr"] == 0.5


# --- begin, end and chaining ---


def test_begin_and_end_bound_the_changes():
    optimizer = make_sgd()
    scheduler = ExponentialLR(optimizer, gamma=0.5, begin=2, end=5)
    # Steps 0 and 1 are before begin; last_step counts from begin; 5 and later are past end.
    assert step_values(optimizer, scheduler, 8) == [1, 1, 1, 0.5, 0.25, 0.25, 0.25, 0.25]


def test_chained_warmup_then_multistep():
    optimizer = make_sgd(lr=0.1)
    warmup = LinearLR(optimizer, start_factor=0.2, begin=0, end=5, by_epoch=False)
    decay = MultiStepLR(optimizer, milestones=[3, 6], gamma=0.1, begin=5, by_epoch=False)
    values = step_values(optimizer, [warmup, decay], 15)
    # Warm-up 0.02 → 0.1 over steps 0-4, then x0.1 at steps 5+3 and 5+6.
    want = [0.02, 0.04, 0.06, 0.08, 0.1, 0.1, 0.1, 0.1] + [0.01] * 3 + [0.001] * 4
    assert values == pytest.approx(want, rel=1e-12)


def test_chained_cosine_is_scaled_by_a_constant_warmup():
    optimizer = make_sgd()
    constant = ConstantParamScheduler(optimizer, "lr", factor=0.5, end=3)
    cosine = CosineAnnealingLR(optimizer, T_max=10)
    values = step_values(optimizer, [constant, cosine], 10)
    cos = [(1 + math.cos(math.pi * t / 10)) / 2 for t in range(10)]
    # Halved while the constant factor holds (steps 0-1), then the plain cosine.
    assert values == pytest.approx([cos[0] / 2, cos[1] / 2, *cos[2:]], rel=1e-12)


# --- state ---


def test_state_dict_is_plain_data_and_loads_with_weights_only(tmp_path):
    optimizer = make_sgd()
    scheduler = MultiStepLR(optimizer, milestones=[2, 2, 5], gamma=0.5)
    step_values(optimizer, scheduler, 3)
    state = scheduler.state_dict()
    assert "optimizer" not in state
    assert state["milestones"] == {2: 2, 5: 1} and type(state["milestones"]) is dict
    path = tmp_path / "sched.pt"
    torch.save(state, path)
    assert torch.load(path, weights_only=True) == state


def test_state_dict_round_trip_continues_the_schedule():
    def build(optimizer):
        return CosineAnnealingLR(optimizer, T_max=12, eta_min_ratio=0.1)

    reference_opt = make_sgd()
    reference = step_values(reference_opt, build(reference_opt), 20)

    first_opt = make_sgd()
    first = build(first_opt)
    head = step_values(first_opt, first, 8)
    saved_sched, saved_opt = first.state_dict(), first_opt.state_dict()

    resumed_opt = make_sgd(lr=123.0)  # a fresh run, its own lr is overwritten by the state
    resumed_opt.load_state_dict(saved_opt)
    resumed = build(resumed_opt)
    resumed.load_state_dict(saved_sched)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a resumed schedule does not warn about call order
        tail = step_values(resumed_opt, resumed, 12)
    assert head + tail == pytest.approx(reference, rel=1e-12)


def test_one_cycle_state_has_no_functions_and_round_trips():
    optimizer = make_sgd()
    scheduler = OneCycleLR(optimizer, eta_max=1.0, total_steps=20)
    step_values(optimizer, scheduler, 5)
    state = scheduler.state_dict()
    assert not any(callable(value) for value in state.values())
    assert "anneal_func" not in state and "_schedule_phases" not in state
    # As the runner resumes: build, then load the optimizer's state, then the scheduler's.
    other_opt = make_sgd()
    other = OneCycleLR(other_opt, eta_max=1.0, total_steps=20, anneal_strategy="linear")
    other_opt.load_state_dict(optimizer.state_dict())
    other.load_state_dict(state)  # anneal_strategy comes back with the state
    assert step_values(other_opt, other, 10) == step_values(optimizer, scheduler, 10)


def test_load_state_dict_of_wrong_type():
    with pytest.raises(TypeError, match=r"StepLR.load_state_dict expects the dict"):
        StepLR(make_sgd(), step_size=1).load_state_dict([("last_step", 3)])


def test_load_state_dict_accepts_mmengine_style_extra_keys():
    optimizer = make_sgd()
    scheduler = MultiStepLR(optimizer, milestones=[1])
    state = scheduler.state_dict()
    state["milestones"] = {1: 1, 3: 1}
    scheduler.load_state_dict(state)
    assert scheduler.milestones[3] == 1 and scheduler.milestones[7] == 0  # a Counter again


# --- warnings and logging ---


def test_warns_when_scheduler_steps_before_optimizer():
    optimizer = make_sgd()
    scheduler = StepLR(optimizer, step_size=1)
    with pytest.warns(UserWarning, match=r"StepLR.step\(\) was called before optimizer.step\(\)"):
        scheduler.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scheduler.step()  # only once
    assert not optimizer._optimizer_step_post_hooks  # the hook is gone after the check


def test_no_warning_in_the_right_order_through_a_wrapper():
    optimizer = make_sgd()
    wrapper = OptimWrapper(optimizer)
    scheduler = StepLR(wrapper, step_size=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = (optimizer.param_groups[0]["params"][0] ** 2).sum() + 1
        wrapper.update_params(loss)
        scheduler.step()


def test_verbose_logs_each_new_value():
    stream = io.StringIO()
    logger = MMLogger.get_instance("test_scheduler_verbose", log_level="INFO")
    handler = logging.StreamHandler(stream)
    logger.addHandler(handler)
    try:
        optimizer = make_sgd()
        scheduler = ExponentialLR(optimizer, gamma=0.5, verbose=True)
        optimizer.step()
        scheduler.step()
    finally:
        logger.removeHandler(handler)
    assert "ExponentialLR: lr of param group 0 set to 5.0000e-01" in stream.getvalue()


def test_inf_end_is_the_default():
    assert StepLR(make_sgd(), step_size=1).end == INF == int(1e9)


def test_deepcopy_and_pickle_leave_the_original_hook_alone():
    import copy
    import pickle

    optimizer = make_sgd()
    scheduler = StepLR(optimizer, step_size=1, gamma=0.5)
    clone = copy.deepcopy(scheduler)
    restored = pickle.loads(pickle.dumps(scheduler))
    del clone, restored
    assert len(optimizer._optimizer_step_post_hooks) == 1  # still the original's
    with pytest.warns(UserWarning, match=r"before optimizer.step\(\)"):
        scheduler.step()
    assert optimizer.param_groups[0]["lr"] == 0.5
