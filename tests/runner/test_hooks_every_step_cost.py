"""Where a user hook implementing ``after_train_iter`` makes every hook due at every step, the
loop does only the work a plain loop calling the same hooks would: it does not ask a hook that
keeps Hook's own ``next_train_iter`` (the answer is always "now"), and the recording hooks do
not look for skipped steps between two consecutive ones. What the hooks read stays MMEngine's
(test_hooks_hub_at_each_step.py checks it at every priority)."""

from __future__ import annotations

import pytest
from call_counts import calls_while_training
from runner_toy_model import TOY_LOOPS, toy_cfg

from treadle.runner.hooks import Hook, IterTimerHook, RuntimeInfoHook
from treadle.runner.runner import Runner


class CountSteps(Hook):
    """A user's hook as most are: ``after_train_iter`` only."""

    def __init__(self) -> None:
        self.steps = 0

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.steps += 1


LOOPS = TOY_LOOPS


@pytest.mark.parametrize("cfg", LOOPS)
def test_a_hook_keeping_the_default_next_train_iter_is_called_at_each_step_unasked(tmp_path, cfg):
    hook = CountSteps()
    runner = Runner(**toy_cfg(tmp_path, custom_hooks=[hook], **cfg))
    counts = calls_while_training(runner, {"asked": Hook.next_train_iter})
    assert hook.steps == 12
    assert counts["asked"] == 0


@pytest.mark.parametrize("cfg", LOOPS)
def test_recording_hooks_do_not_catch_up_between_consecutive_steps(tmp_path, cfg):
    # The logger every 5 steps: only the user hook makes the others due at each step.
    runner = Runner(
        **toy_cfg(
            tmp_path,
            custom_hooks=[CountSteps()],
            default_hooks=dict(logger=dict(type="LoggerHook", interval=5)),
            **cfg,
        )
    )
    counts = calls_while_training(
        runner,
        {
            "runtime_info": RuntimeInfoHook.record_skipped_steps,
            "timer": IterTimerHook.record_skipped_steps,
        },
    )
    # At most at the first step of each pass over the data (3 epochs, or one iter-based run,
    # which validates twice), never at each of the 12 steps.
    assert counts["runtime_info"] <= 3
    assert counts["timer"] <= 3
    hub = runner.message_hub
    for key in ("train/loss", "train/lr", "train/time", "train/data_time"):
        assert len(hub.get_scalar(key).data[0]) == 12, key


def test_an_iter_timer_subclass_with_its_own_iteration_methods_has_them_called(tmp_path):
    class Timer(IterTimerHook):
        def __init__(self) -> None:
            super().__init__()
            self.modes: list[str] = []

        def _before_iter(self, runner, batch_idx, data_batch=None, mode="train"):
            self.modes.append(f"before {mode}")
            super()._before_iter(runner, batch_idx, data_batch, mode)

        def _after_iter(self, runner, batch_idx, data_batch=None, outputs=None, mode="train"):
            self.modes.append(f"after {mode}")
            super()._after_iter(runner, batch_idx, data_batch, outputs, mode)

    timer = Timer()
    runner = Runner(
        **toy_cfg(tmp_path, custom_hooks=[CountSteps()], default_hooks=dict(timer=timer))
    )
    runner.train()
    assert timer.modes.count("before train") == 12
    assert timer.modes.count("after train") == 12
    assert len(runner.message_hub.get_scalar("train/time").data[0]) == 12
