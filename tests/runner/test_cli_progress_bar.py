"""ProgressBarHook: the live bar of `treadle train` on a terminal, nothing in a pipe. Driven
through the hook points with a stub runner; test_cli_main_job.py runs it in a real Runner."""

from __future__ import annotations

import io
import logging
from types import SimpleNamespace

import pytest
import torch

from treadle.logging import Logger, MessageHub
from treadle.runner.hooks.hook import Hook
from treadle.runner.hooks.progress_bar_hook import ProgressBarHook
from treadle.runner.registry import HOOKS


class LoggerHook(Hook):
    """Stands for treadle's LoggerHook: the bar takes its interval."""

    def __init__(self, interval: int) -> None:
        self.interval = interval


def _runner(name: str, *, max_epochs: int = 2, per_epoch: int = 4, max_iters: int | None = None):
    logger = Logger.get_instance(name, logger_name="treadle")
    hub = MessageHub.get_instance(name)
    return SimpleNamespace(
        rank=0,
        logger=logger,
        message_hub=hub,
        hooks=[LoggerHook(interval=2)],
        train_loop=SimpleNamespace(dataloader=[None] * per_epoch),
        val_loop=SimpleNamespace(dataloader=[None] * 3),
        test_loop=SimpleNamespace(dataloader=[None] * 5),
        max_epochs=max_epochs,
        max_iters=max_iters if max_iters is not None else max_epochs * per_epoch,
        epoch=0,
        iter=0,
    )


def _train(hook: ProgressBarHook, runner, losses: list[float]) -> None:
    """Call the hook points as an epoch-based loop would, with a val pass per epoch."""
    hook.before_run(runner)
    hook.before_train(runner)
    per_epoch = len(runner.train_loop.dataloader)
    for epoch in range(runner.max_epochs):
        runner.epoch = epoch
        hook.before_train_epoch(runner)
        for batch_idx in range(per_epoch):
            runner.message_hub.update_scalar("train/loss", torch.tensor(losses[runner.iter]))
            hook.after_train_iter(runner, batch_idx)
            runner.iter += 1
        hook.after_train_epoch(runner)
        hook.before_val_epoch(runner)
        for batch_idx in range(3):
            hook.after_val_iter(runner, batch_idx)
        hook.after_val_epoch(runner, metrics={"acc": 1.0})
    hook.after_train(runner)
    hook.after_run(runner)


def test_bar_shows_epoch_iteration_loss_and_eta_on_a_terminal():
    screen = io.StringIO()
    runner = _runner("bar_terminal")
    hook = ProgressBarHook(file=screen, force_terminal=True)
    _train(hook, runner, [0.5 + i for i in range(8)])
    text = screen.getvalue()
    assert "Epoch 2/2" in text
    assert "8/8" in text
    # The loss shown is the one at the logger's interval (2): iteration 8's, 7.5.
    assert "loss: 7.5000" in text
    assert "eta" in text
    assert hook._progress is None  # stopped at after_run


def test_log_lines_go_above_the_bar_and_the_handler_is_restored():
    screen = io.StringIO()
    runner = _runner("bar_logs")
    console = next(h for h in runner.logger.handlers if type(h) is logging.StreamHandler)
    console.setStream(screen)
    hook = ProgressBarHook(file=screen, force_terminal=True)
    hook.before_run(runner)
    hook.before_train(runner)
    assert console.stream is not screen  # printing through the live display now
    runner.logger.info("Epoch(train) [1][2/4]  loss: 0.5000")
    long_line = "x" * 150  # wider than the console: left for the terminal to wrap
    runner.logger.info(long_line)
    hook.after_run(runner)
    assert console.stream is screen
    assert "Epoch(train) [1][2/4]  loss: 0.5000" in screen.getvalue()
    assert long_line in screen.getvalue()


def test_iteration_based_run_is_labelled_train():
    screen = io.StringIO()
    runner = _runner("bar_iters", max_epochs=1, per_epoch=4, max_iters=6)
    hook = ProgressBarHook(file=screen, force_terminal=True, interval=3)
    hook.before_run(runner)
    hook.before_train(runner)
    for _ in range(6):
        runner.message_hub.update_scalar("train/loss", torch.tensor(0.25))
        hook.after_train_iter(runner, runner.iter % 4)
        runner.iter += 1
    hook.after_run(runner)
    text = screen.getvalue()
    assert "Train" in text and "Epoch" not in text
    assert "6/6" in text and "loss: 0.2500" in text


def test_resumed_run_starts_the_bar_at_the_resumed_iteration():
    screen = io.StringIO()
    runner = _runner("bar_resume")
    runner.iter, runner.epoch = 4, 1
    hook = ProgressBarHook(file=screen, force_terminal=True)
    hook.before_train(runner)
    assert hook._progress.tasks[0].completed == 4
    hook.after_run(runner)


def test_test_pass_gets_a_bar():
    screen = io.StringIO()
    runner = _runner("bar_test")
    hook = ProgressBarHook(file=screen, force_terminal=True)
    hook.before_run(runner)
    hook.before_test_epoch(runner)
    for batch_idx in range(5):
        hook.after_test_iter(runner, batch_idx)
    assert hook._progress.tasks[-1].completed == 5
    hook.after_test_epoch(runner, metrics={})
    hook.after_run(runner)
    assert "Test" in screen.getvalue()


@pytest.mark.parametrize(
    ("kwargs", "rank"),
    [({"force_terminal": False}, 0), ({"enabled": False, "force_terminal": True}, 0), ({}, 1)],
)
def test_no_bar_in_a_pipe_when_disabled_or_on_other_ranks(kwargs, rank):
    screen = io.StringIO()  # not a terminal
    runner = _runner(f"bar_off_{rank}_{len(kwargs)}")
    runner.rank = rank
    hook = ProgressBarHook(file=screen, **kwargs)
    _train(hook, runner, [0.5] * 8)
    assert screen.getvalue() == ""


def test_built_by_name_from_the_hooks_registry():
    hook = HOOKS.build(dict(type="ProgressBarHook", enabled=False))
    assert isinstance(hook, ProgressBarHook)
    assert hook.priority == "VERY_LOW"


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="enabled must be True, False or None, got 'yes'"):
        ProgressBarHook(enabled="yes")
    with pytest.raises(ValueError, match="interval must be a positive int or None, got 0"):
        ProgressBarHook(interval=0)


def test_train_task_shows_the_timers_eta_not_richs_estimate():
    # IterTimerHook's eta (validations and saves to come included) is read at the interval.
    screen = io.StringIO()
    runner = _runner("bar_eta", max_epochs=1, per_epoch=4)
    hook = ProgressBarHook(file=screen, force_terminal=True, interval=2)
    hook.before_run(runner)
    hook.before_train(runner)
    runner.message_hub.update_info("eta", 3723.0)
    for batch_idx in range(2):
        hook.after_train_iter(runner, batch_idx)
        runner.iter += 1
    train = hook._progress.tasks[0]
    assert train.fields["eta"] == 3723.0
    hook._progress.refresh()
    assert "1:02:03" in screen.getvalue()
    hook.after_run(runner)


def test_validation_is_a_task_of_its_own_started_over_each_pass():
    screen = io.StringIO()
    runner = _runner("bar_val_task")
    hook = ProgressBarHook(file=screen, force_terminal=True)
    hook.before_run(runner)
    hook.before_train(runner)
    for val_time in (20.0, 21.5):
        hook.before_val_epoch(runner)
        val = hook._progress.tasks[1]
        assert (val.description, val.completed, val.total) == ("Val", 0, 3)
        for batch_idx in range(3):
            hook.after_val_iter(runner, batch_idx)
        runner.message_hub.update_info("val_time", val_time)  # IterTimerHook's measure
        hook.after_val_epoch(runner, metrics={"acc": 1.0})
        # Beside the train task, kept after the pass with how long it took.
        assert [t.description for t in hook._progress.tasks] == ["Epoch 1/2", "Val"]
        assert val.completed == 3
        assert val.fields["status"] == f"took {val_time:.1f}s"
    hook.after_run(runner)
    assert "took 21.5s" in screen.getvalue()
