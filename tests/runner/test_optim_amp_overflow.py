"""fp16 loss-scale overflows made visible: skipped steps counted and logged with the loss scale,
the collapse error, and iteration schedulers that advance only on steps the optimizer took.

Every run is a real Runner training in float16 on the CPU (torch.amp.GradScaler('cpu')) with a
model whose gradients overflow in its first k steps (tests/support/amp_overflow_toys.py)."""

from __future__ import annotations

import copy
import json
import pickle
import warnings

import pytest
import torch
from amp_overflow_toys import amp_overflow_cfg, logged, train
from runner_toy_model import unique_name
from runner_toys import captured_log

import treadle.runner.optim.optimizer.amp_optimizer_wrapper as amp_module
from treadle.logging import MessageHub
from treadle.runner.hooks import ParamSchedulerHook
from treadle.runner.optim import AmpOptimWrapper, LinearLR, OptimWrapperDict, build_optim_wrapper
from treadle.runner.optim.optimizer.amp_overflow import LossScaleCollapseError, loss_scale_items
from treadle.runner.runner import Runner

ORDER_WARNING = "before optimizer.step()"


@pytest.fixture(autouse=True)
def cpu_run(monkeypatch):
    """float16 with a CPU GradScaler, also on machines with an accelerator."""
    monkeypatch.setattr(amp_module, "get_device", lambda: "cpu")


def order_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if ORDER_WARNING in str(w.message)]


def iter_scheduler(runner: Runner) -> LinearLR:
    (scheduler,) = runner.param_schedulers
    return scheduler


# --- counting and logging ----------------------------------------------------------------


def test_skipped_steps_are_logged_and_the_scheduler_waits_for_real_steps(tmp_path):
    k, max_iters = 3, 10
    runner = Runner(**amp_overflow_cfg(tmp_path, overflow_steps=k, max_iters=max_iters))
    lines, caught = train(runner)
    assert runner.optim_wrapper.skipped_steps == k
    # One line per iteration: each of the first k skipped its step, and halved the scale.
    assert logged(lines, "skipped_steps") == [1] * k + [0] * (max_iters - k)
    assert logged(lines, "loss_scale")[: k + 1] == [2.0**15, 2.0**14, 2.0**13, 2.0**13]
    # The schedule moved only on the steps the optimizer took, and never before the first.
    assert iter_scheduler(runner).last_step == max_iters - k
    assert order_warnings(caught) == []


def test_the_count_covers_the_logging_interval(tmp_path):
    cfg = amp_overflow_cfg(
        tmp_path, overflow_steps=3, max_iters=10,
        default_hooks=dict(logger=dict(type="LoggerHook", interval=2)),
    )  # fmt: skip
    lines, _ = train(Runner(**cfg))
    # Lines at iterations 2, 4, 6, 8 and 10: the first two steps, then the third.
    assert logged(lines, "skipped_steps") == [2, 1, 0, 0, 0]


def test_loss_scale_and_skipped_steps_reach_scalars_json(tmp_path):
    runner = Runner(**amp_overflow_cfg(tmp_path, overflow_steps=2, max_iters=4))
    train(runner)
    (scalars,) = tmp_path.glob("*/vis_data/scalars.json")
    entries = [json.loads(line) for line in scalars.read_text().splitlines()]
    assert [e["skipped_steps"] for e in entries] == [1, 1, 0, 0]
    assert [e["loss_scale"] for e in entries] == [2.0**15, 2.0**14, 2.0**14, 2.0**14]


def test_no_scaler_no_loss_scale_in_the_line(tmp_path):
    cfg = amp_overflow_cfg(tmp_path, overflow_steps=0, max_iters=3, amp=dict(dtype="bfloat16"))
    runner = Runner(**cfg)
    lines, _ = train(runner)
    assert lines and not any("loss_scale" in line or "skipped_steps" in line for line in lines)
    assert runner.optim_wrapper.skipped_steps == 0


def test_plain_optim_wrapper_lines_are_unchanged(tmp_path):
    cfg = amp_overflow_cfg(
        tmp_path, max_iters=2, optim_wrapper=dict(type="OptimWrapper", optimizer=dict(type="SGD"))
    )
    cfg["optim_wrapper"]["optimizer"]["lr"] = 0.01
    lines, _ = train(Runner(**cfg))
    assert len(lines) == 2 and not any("loss_scale" in line for line in lines)


def test_a_resumed_run_goes_on_from_the_held_schedule_and_the_saved_scale(tmp_path):
    hooks = dict(
        logger=dict(type="LoggerHook", interval=1),
        checkpoint=dict(type="CheckpointHook", interval=5, by_epoch=False),
    )
    first = Runner(**amp_overflow_cfg(tmp_path, overflow_steps=3, max_iters=5, default_hooks=hooks))
    train(first)
    assert iter_scheduler(first).last_step == 2
    resumed = Runner(
        **amp_overflow_cfg(tmp_path, overflow_steps=0, max_iters=10, default_hooks=hooks),
        resume=True,
    )
    lines, caught = train(resumed)
    assert resumed.iter == 10 and iter_scheduler(resumed).last_step == 2 + 5
    assert logged(lines, "skipped_steps") == [0] * 5
    assert logged(lines, "loss_scale")[0] == 2.0**13
    assert order_warnings(caught) == []


# --- MMEngine's behaviour on request -----------------------------------------------------------


def test_step_on_skipped_advances_every_iteration_as_mmengine_does(tmp_path):
    k, max_iters = 3, 10
    cfg = amp_overflow_cfg(tmp_path, overflow_steps=k, max_iters=max_iters)
    cfg["default_hooks"]["param_scheduler"] = dict(type="ParamSchedulerHook", step_on_skipped=True)
    runner = Runner(**cfg)
    _, caught = train(runner)
    assert iter_scheduler(runner).last_step == max_iters
    # The first scheduler step came before any optimizer step: the warning PyTorch gives.
    assert len(order_warnings(caught)) == 1


def test_step_on_skipped_must_be_a_bool():
    with pytest.raises(TypeError, match=r"ParamSchedulerHook step_on_skipped must be True or "
                       r"False, got str: 'yes'"):  # fmt: skip
        ParamSchedulerHook(step_on_skipped="yes")


def test_accumulation_iterations_still_advance_only_skipped_updates_hold(tmp_path):
    # Updates every 2 iterations; the first update (iteration 2) overflows. A small scale: the
    # accumulated fp16 gradients of the toy would really overflow at 2**15.
    cfg = amp_overflow_cfg(
        tmp_path, overflow_steps=2, max_iters=8,
        amp=dict(accumulative_counts=2, loss_scale=dict(init_scale=1024.0)),
    )  # fmt: skip
    runner = Runner(**cfg)
    lines, _ = train(runner)
    assert runner.optim_wrapper.skipped_steps == 1
    assert logged(lines, "skipped_steps") == [0, 1, 0, 0, 0, 0, 0, 0]
    assert iter_scheduler(runner).last_step == 8 - 1


# --- the collapse error ------------------------------------------------------------------


def test_a_scale_that_keeps_collapsing_stops_the_run(tmp_path):
    cfg = amp_overflow_cfg(
        tmp_path, overflow_steps=None, max_iters=20, amp=dict(max_consecutive_skips=8)
    )
    runner = Runner(**cfg)
    with pytest.raises(LossScaleCollapseError) as error:
        train(runner)
    message = str(error.value)
    assert "the fp16 loss scale collapsed at iteration 8" in message
    assert "the last 8 optimizer steps (from iteration 1 on)" in message
    # The scales tried: the first three and the last five of the run of skips.
    assert "65536, 32768, 16384, 8192, 4096, 2048, 1024, 512" in message
    assert "max_consecutive_skips=8" in message and "bfloat16" in message
    assert runner.iter == 7  # stopped inside iteration 8


def test_the_history_elides_the_middle_of_a_long_collapse(tmp_path):
    cfg = amp_overflow_cfg(
        tmp_path, overflow_steps=None, max_iters=20, amp=dict(max_consecutive_skips=12)
    )
    with pytest.raises(LossScaleCollapseError, match=r"65536, 32768, 16384, \.\.\. \(4 more\) "
                       r"\.\.\., 512, 256, 128, 64, 32\. "):  # fmt: skip
        train(Runner(**cfg))


def test_the_default_stops_after_50_skips(tmp_path):
    cfg = amp_overflow_cfg(tmp_path, overflow_steps=None, max_iters=60)
    with pytest.raises(LossScaleCollapseError, match="collapsed at iteration 50: the last 50") as e:
        train(Runner(**cfg))
    assert "65536, 32768, 16384, ... (42 more) ..., " in str(e.value)
    assert ", 1.16415e-10. The gradients overflow" in str(e.value)


def test_a_run_that_recovers_before_the_limit_goes_on(tmp_path):
    cfg = amp_overflow_cfg(
        tmp_path, overflow_steps=5, max_iters=10, amp=dict(max_consecutive_skips=6)
    )
    runner = Runner(**cfg)
    train(runner)
    assert runner.iter == 10 and runner.optim_wrapper.skipped_steps == 5


def test_none_never_stops(tmp_path):
    cfg = amp_overflow_cfg(
        tmp_path, overflow_steps=None, max_iters=6, amp=dict(max_consecutive_skips=None)
    )
    runner = Runner(**cfg)
    _, caught = train(runner)
    assert runner.optim_wrapper.skipped_steps == 6
    assert iter_scheduler(runner).last_step == 0
    assert order_warnings(caught) == []


@pytest.mark.parametrize(
    ("value", "error", "match"),
    [
        (0, ValueError, r"max_consecutive_skips must be >= 1 \(or None to never stop\), got 0"),
        (-3, ValueError, r"max_consecutive_skips must be >= 1 .*got -3"),
        (2.5, TypeError, r"max_consecutive_skips must be an int >= 1 or None .*got float: 2\.5"),
        (True, TypeError, r"max_consecutive_skips must be an int .*got bool: True"),
        ("50", TypeError, r"max_consecutive_skips must be an int .*got str: '50'"),
    ],
)
def test_bad_max_consecutive_skips(value, error, match):
    model = torch.nn.Linear(2, 1)
    cfg = dict(
        type="AmpOptimWrapper", dtype="float16", optimizer=dict(type="SGD", lr=0.1),
        max_consecutive_skips=value,
    )  # fmt: skip
    with pytest.raises(error, match=match):
        build_optim_wrapper(model, cfg)


# --- wrappers used alone, several optimizers, fused optimizers ---------------------------------


def overflowing_loss(param: torch.nn.Parameter, overflow: bool) -> torch.Tensor:
    loss = (param * 2).sum()
    return loss * float("inf") if overflow else loss


def test_a_wrapper_used_alone_names_its_step():
    param = torch.nn.Parameter(torch.ones(2))
    wrapper = AmpOptimWrapper(
        optimizer=torch.optim.SGD([param], lr=0.1), dtype="float16", max_consecutive_skips=2
    )
    # A hub no loop writes the iteration into.
    wrapper.message_hub = MessageHub.get_instance(unique_name("amp_alone"))
    wrapper.update_params(overflowing_loss(param, True))
    assert wrapper.skipped_steps == 1
    with pytest.raises(LossScaleCollapseError, match=r"collapsed at optimizer step 2: the last 2"):
        wrapper.update_params(overflowing_loss(param, True))


@pytest.mark.parametrize("copy_wrapper", [copy.deepcopy, lambda w: pickle.loads(pickle.dumps(w))])
def test_a_copied_wrapper_counts_its_own_optimizer(copy_wrapper):
    # A torch optimizer drops its step hooks when copied: the copy must hook on again, or it
    # would take every step for a skipped one.
    param = torch.nn.Parameter(torch.ones(2))
    wrapper = AmpOptimWrapper(optimizer=torch.optim.SGD([param], lr=0.1), dtype="float16")
    wrapper.update_params(overflowing_loss(param, True))
    copied = copy_wrapper(wrapper)
    (copied_param,) = copied.optimizer.param_groups[0]["params"]
    for overflow in (False, False, True):
        copied.update_params(overflowing_loss(copied_param, overflow))
    assert copied.skipped_steps == 2 and wrapper.skipped_steps == 1
    wrapper.update_params(overflowing_loss(param, False))
    assert wrapper.skipped_steps == 1


def test_optim_wrapper_dict_holds_back_only_the_schedulers_of_the_skipping_optimizer():
    params = {name: torch.nn.Parameter(torch.ones(2)) for name in "ab"}
    wrappers = OptimWrapperDict(**{
        name: AmpOptimWrapper(optimizer=torch.optim.SGD([p], lr=1.0), dtype="float16")
        for name, p in params.items()
    })  # fmt: skip
    schedulers = {
        name: [LinearLR(wrappers[name], start_factor=0.5, by_epoch=False, end=100)] for name in "ab"
    }
    runner = type("R", (), dict(optim_wrapper=wrappers, param_schedulers=schedulers))()
    hook = ParamSchedulerHook()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(5):
            for name, param in params.items():
                wrappers[name].update_params(overflowing_loss(param, name == "a" and i < 2))
            hook.after_train_iter(runner, i)
    assert schedulers["a"][0].last_step == 3 and schedulers["b"][0].last_step == 5
    assert not [w for w in caught if ORDER_WARNING in str(w.message)]
    items = loss_scale_items(wrappers, iteration=4)
    assert items == {
        "a.loss_scale": 2.0**14, "a.skipped_steps": 2,
        "b.loss_scale": 2.0**16, "b.skipped_steps": 0,
    }  # fmt: skip
    # Asked again for the same line: the same counts; for the next line: none since.
    assert loss_scale_items(wrappers, iteration=4)["a.skipped_steps"] == 2
    assert loss_scale_items(wrappers, iteration=5)["a.skipped_steps"] == 0


def test_an_optimizer_that_checks_inf_itself_is_not_counted_and_says_so():
    param = torch.nn.Parameter(torch.ones(2))
    optimizer = torch.optim.Adam([param], lr=0.1, fused=True)
    with captured_log() as log:
        wrapper = AmpOptimWrapper(optimizer=optimizer, dtype="float16")
    assert any("cannot count the steps it skips" in m for m in log.messages)
    assert "Adam checks the scaled gradients for inf itself" in "\n".join(log.messages)
    wrapper.update_params(overflowing_loss(param, True))
    assert wrapper.skipped_steps == 0 and loss_scale_items(wrapper, 0) == {}


def test_counting_reads_nothing_from_the_device_beyond_the_scalers_own_check(monkeypatch):
    # GradScaler.step reads its overflow flag once per step (.item()); counting, the
    # scheduler's hold and the scale history add no read: a reading hook would show up here.
    param = torch.nn.Parameter(torch.ones(2))
    wrapper = AmpOptimWrapper(optimizer=torch.optim.SGD([param], lr=0.1), dtype="float16")
    reads = []
    for name in ("item", "__float__", "__bool__", "tolist", "cpu"):
        original = getattr(torch.Tensor, name)

        def counted(self, *args, _original=original, _name=name, **kwargs):
            reads.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, counted)
    for overflow in (True, True, False, False, True, False):
        loss = overflowing_loss(param, overflow)
        reads.clear()
        wrapper.update_params(loss)
        assert reads == ["item"]
    monkeypatch.undo()
    assert wrapper.skipped_steps == 3
