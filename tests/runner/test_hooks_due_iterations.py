"""The train loops call the iteration hooks only where one is due (Hook.next_train_iter), and
the hooks that only record (defer_train_iter) still see every step."""

from __future__ import annotations

import pytest
import torch
from runner_toy_model import ToyModel, toy_cfg

from treadle.runner.hooks import CheckpointHook, Hook, LoggerHook, ParamSchedulerHook
from treadle.runner.loops.iter_hooks import TrainIterHooks
from treadle.runner.runner import Runner


class EveryThird(Hook):
    """Acts at every third iteration and says so."""

    def __init__(self) -> None:
        self.before: list[int] = []
        self.after: list[int] = []

    def next_train_iter(self, runner, iteration, batch_idx):
        return iteration + (-(iteration + 1) % 3)

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.before.append(runner.iter)

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.after.append(runner.iter)


class Every(Hook):
    """Acts at every iteration (says nothing: the default)."""

    def __init__(self) -> None:
        self.after: list[int] = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.after.append(runner.iter)


QUIET = dict(logger=None, checkpoint=None)


def train(tmp_path, hooks, **cfg):
    cfg.setdefault("default_hooks", QUIET)
    runner = Runner(**toy_cfg(tmp_path, custom_hooks=hooks, val_dataloader=None, val_cfg=None,
                              val_evaluator=None, **cfg))  # fmt: skip
    runner.train()
    return runner


def test_a_hook_is_called_where_it_is_due(tmp_path):
    hook = EveryThird()
    train(tmp_path, [hook])  # 3 epochs of 4 iterations
    assert hook.after == [2, 5, 8, 11]
    assert hook.before == hook.after


def test_a_hook_that_says_nothing_is_called_at_every_iteration(tmp_path):
    every, third = Every(), EveryThird()
    train(tmp_path, [every, third])
    assert every.after == list(range(12))
    # Another hook being due does not make this one due.
    assert third.after == [2, 5, 8, 11]


class SeenAtValidation(Hook):
    """How many train/loss entries the message hub holds when each validation starts."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, int]] = []

    def before_val(self, runner):
        losses = runner.message_hub.get_scalar("train/loss").data[0]
        self.seen.append((runner.iter, len(losses)))


@pytest.mark.parametrize("by_epoch", [True, False])
def test_what_the_hooks_record_is_complete_when_validation_starts(tmp_path, by_epoch):
    seen = SeenAtValidation()
    train_cfg = (
        dict(by_epoch=True, max_epochs=3)
        if by_epoch
        else dict(by_epoch=False, max_iters=10, val_interval=4)
    )
    runner = Runner(
        **toy_cfg(
            tmp_path,
            custom_hooks=[seen],
            default_hooks=dict(checkpoint=None, logger=dict(type="LoggerHook", interval=50)),
            train_cfg=train_cfg,
            param_scheduler=None,
        )
    )
    runner.train()
    expected = [(4, 4), (8, 8), (12, 12)] if by_epoch else [(4, 4), (8, 8), (10, 10)]
    assert seen.seen == expected


def test_recording_hooks_see_every_step(tmp_path):
    runner = train(tmp_path, [], default_hooks=dict(checkpoint=None))
    hub = runner.message_hub
    # One entry per iteration, though RuntimeInfoHook and IterTimerHook ran only with the logger.
    for key in ("train/loss", "train/lr", "train/time", "train/data_time"):
        assert len(hub.get_scalar(key).data[0]) == 12, key
    assert all(value >= 0 for value in hub.get_scalar("train/time").data[0])
    assert hub.get_info("iter") == 11


class SometimesAux(ToyModel):
    """Returns an extra 'aux' output at even steps only, and 'loss' at every step."""

    def train_step(self, data, optim_wrapper):
        outputs = super().train_step(data, optim_wrapper)
        if self.loss_calls % 2 == 1:  # loss_calls counts this step already
            outputs["aux"] = torch.tensor(float(self.loss_calls))
        return outputs


def test_steps_with_different_outputs_each_reach_their_own_key(tmp_path):
    # Logging every 4 steps: the hooks take 4 recorded steps at a time, whose outputs do not
    # all have the same names.
    runner = train(
        tmp_path, [], model=SometimesAux(), default_hooks=dict(checkpoint=None, logger=dict(
            type="LoggerHook", interval=4)),
    )  # fmt: skip
    hub = runner.message_hub
    assert len(hub.get_scalar("train/loss").data[0]) == 12
    assert hub.get_scalar("train/aux").data[0] == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]


def test_a_hook_added_during_training_is_called_from_the_next_iteration(tmp_path):
    late = Every()

    class AddLate(EveryThird):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            super().after_train_iter(runner, batch_idx, data_batch, outputs)
            if runner.iter == 5:
                runner.register_hook(late)

    train(tmp_path, [AddLate()])
    assert late.after == [6, 7, 8, 9, 10, 11]


def test_an_error_in_a_due_hook_names_the_hook_and_the_point(tmp_path):
    class Broken(EveryThird):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            raise ValueError("broken")

    with pytest.raises(ValueError, match="broken") as caught:
        train(tmp_path, [Broken()])
    assert "raised by Broken.after_train_iter" in caught.value.__notes__


def test_builtin_hooks_say_when_they_are_due(tmp_path):
    runner = Runner(**toy_cfg(tmp_path, default_hooks=QUIET))
    runner.train()  # 4 batches an epoch, 12 iterations
    logger = LoggerHook(interval=3)
    # Batch 0 of an epoch: the 3rd batch (index 2) logs; at batch 3 the epoch ends.
    assert logger.next_train_iter(runner, iteration=4, batch_idx=0) == 6
    assert logger.next_train_iter(runner, iteration=7, batch_idx=3) == 7
    assert LoggerHook(interval=50).next_train_iter(runner, 4, 0) == 7  # the epoch's end

    by_iter = CheckpointHook(interval=5, by_epoch=False, save_last=False)
    assert by_iter.next_train_iter(runner, 0, 0) == 4
    assert by_iter.next_train_iter(runner, 5, 1) == 9
    late_start = CheckpointHook(interval=5, by_epoch=False, save_begin=7, save_last=False)
    assert late_start.next_train_iter(runner, 0, 0) == 6  # saves after iteration 7 first
    last = CheckpointHook(interval=50, by_epoch=False)
    assert last.next_train_iter(runner, 3, 3) == runner.max_iters - 1
    assert CheckpointHook(interval=1).next_train_iter(runner, 0, 0) is None  # by epoch

    assert ParamSchedulerHook().next_train_iter(runner, 0, 0) is None  # no scheduler


def test_a_runner_without_a_dispatch_table_keeps_calling_every_iteration():
    # Such a runner (a stand-in of one's own) gets its hooks called through call_hook at every
    # iteration: tests/runner/test_loops_train.py trains through one.
    assert TrainIterHooks.of(object()) is None
