"""Light steps: where the only hooks due are user hooks that implement ``after_train_iter``
alone and keep Hook's own ``next_train_iter`` (as most do), the loop calls them but not
RuntimeInfoHook and IterTimerHook. What those two would have written is written when a hook
reads the message hub, as far as each had gone at the reading hook's place: the hub reads as
in MMEngine at every priority (test_mmengine_parity_light_steps.py compares with MMEngine
itself)."""

from __future__ import annotations

import pytest
from call_counts import calls_while_training
from runner_toy_model import toy_cfg

from treadle.runner.hooks import Hook, IterTimerHook, RuntimeInfoHook
from treadle.runner.runner import Runner

KEYS = ("train/lr", "train/loss", "train/time", "train/data_time")
# No scheduler stepping by iteration: it would be due at every step (no light step).
ITER_BASED = dict(
    train_cfg=dict(by_epoch=False, max_iters=12, val_interval=6),
    param_scheduler=None,
    log_processor=dict(by_epoch=False),
)
LOOPS = [pytest.param({}, id="epoch-based"), pytest.param(ITER_BASED, id="iter-based")]
# Registered after RuntimeInfoHook (VERY_HIGH) and IterTimerHook (NORMAL), custom hooks of the
# same priority are called after them.
PRIORITIES = ("HIGHEST", "VERY_HIGH", "HIGH", "NORMAL", "LOW", "LOWEST")


class Reader(Hook):
    """Reads the hub in ``after_train_iter``: history lengths, lr, loss, 'iter' and 'eta'."""

    def __init__(self, priority: str) -> None:
        self.priority = priority
        self.seen: list[tuple] = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        hub = runner.message_hub
        scalars = hub.log_scalars
        lengths = {key: len(scalars[key].data[0]) if key in scalars else 0 for key in KEYS}
        loss = scalars["train/loss"].current() if lengths["train/loss"] else None
        self.seen.append((runner.iter, lengths, scalars["train/lr"].current(), loss,
                          hub.get_info("iter"), hub.runtime_info.get("eta"),
                          float(outputs["loss"])))  # fmt: skip


def train(tmp_path, hooks, **cfg) -> Runner:
    cfg.setdefault("default_hooks", dict(logger=dict(type="LoggerHook", interval=5)))
    runner = Runner(**toy_cfg(tmp_path, custom_hooks=hooks, **cfg))
    runner.train()
    return runner


@pytest.mark.parametrize("cfg", LOOPS)
def test_the_recording_hooks_are_not_called_where_only_user_hooks_are_due(tmp_path, cfg):
    reader = Reader("LOWEST")
    runner = Runner(**toy_cfg(tmp_path, custom_hooks=[reader],
                              default_hooks=dict(logger=dict(type="LoggerHook", interval=5)),
                              **cfg))  # fmt: skip
    counts = calls_while_training(
        runner,
        {"runtime_info": RuntimeInfoHook.after_train_iter, "timer": IterTimerHook.after_train_iter},
    )
    assert len(reader.seen) == 12
    # Called where the logger is due (every 5) and at the end of each pass over the data.
    assert 0 < counts["runtime_info"] <= 6
    assert counts["timer"] == counts["runtime_info"]
    hub = runner.message_hub
    for key in KEYS:
        assert len(hub.get_scalar(key).data[0]) == 12, key


@pytest.mark.parametrize("cfg", LOOPS)
def test_user_hooks_read_the_hub_as_mmengine_shows_it_at_every_priority(tmp_path, cfg):
    readers = [Reader(priority) for priority in PRIORITIES]
    train(tmp_path, readers, **cfg)
    for reader in readers:
        assert [i for i, *_ in reader.seen] == list(range(12))
        after_runtime_info = reader.priority != "HIGHEST"
        after_timer = reader.priority in ("NORMAL", "LOW", "LOWEST")
        for i, lengths, _lr, loss, iteration, _eta, step_loss in reader.seen:
            where = (reader.priority, i)
            assert lengths == {
                "train/lr": i + 1,
                "train/loss": i + after_runtime_info,
                "train/time": i + after_timer,
                "train/data_time": i + 1,
            }, where
            assert iteration == i, where
            if after_runtime_info:
                assert loss == pytest.approx(step_loss), where
    # The learning rate of each step, whoever reads it.
    lrs = {reader.priority: [lr for _, _, lr, *_ in reader.seen] for reader in readers}
    assert len({tuple(values) for values in lrs.values()}) == 1


def test_the_eta_read_before_the_timer_is_the_last_steps_and_after_it_this_ones(tmp_path):
    high, low = Reader("HIGH"), Reader("LOW")
    train(tmp_path, [high, low])
    etas_high = [eta for *_, eta, _ in high.seen]
    etas_low = [eta for *_, eta, _ in low.seen]
    # Within an epoch (a validation between epochs writes its own 'eta').
    for i in range(12):
        if i % 4:
            assert etas_high[i] == etas_low[i - 1], i
        assert etas_low[i] != etas_high[i], i


def test_a_recording_hook_subclass_with_its_own_after_train_iter_is_called_at_each_step(
    tmp_path,
):
    class RuntimeInfo(RuntimeInfoHook):
        calls = 0

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            type(self).calls += 1
            super().after_train_iter(runner, batch_idx, data_batch, outputs)

    reader = Reader("LOWEST")
    runner = train(tmp_path, [reader], default_hooks=dict(
        runtime_info=RuntimeInfo(), logger=dict(type="LoggerHook", interval=5)))  # fmt: skip
    assert RuntimeInfo.calls == 12
    assert len(runner.message_hub.get_scalar("train/loss").data[0]) == 12


def test_a_hook_registered_by_a_user_hook_is_called_from_the_next_step(tmp_path):
    class Counter_(Hook):
        def __init__(self) -> None:
            self.iterations: list[int] = []

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            self.iterations.append(runner.iter)

    late = Counter_()

    class Registers(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if runner.iter == 5:
                runner.register_hook(late)

    runner = train(tmp_path, [Registers()])
    assert late.iterations == list(range(6, 12))
    assert len(runner.message_hub.get_scalar("train/loss").data[0]) == 12


def test_a_loop_state_taken_by_a_user_hook_at_a_light_step_checks_the_losses_first(tmp_path):
    # A NaN loss from iteration 1 (index) on; the hook takes the loop's state (what a
    # checkpoint holds) at index 2, a light step: the held losses are checked first.
    from treadle.runner.loops import NonFiniteLossError

    class TakesState(Hook):
        state = None

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if runner.iter == 2:
                self.state = runner.train_loop.state_dict()

    hook = TakesState()
    model = dict(type="RunnerToyModel", nonfinite_from=1)
    with pytest.raises(NonFiniteLossError, match="iteration 2 "):
        train(tmp_path, [hook], model=model)
    assert hook.state is None
