"""What the train ETA counts still to come: validation runs (``train_loop.validations_left()``)
and checkpoint saves (``CheckpointHook.saves_left``), checked against the rule they mirror and
against what a real Runner then does; and the timer's bookkeeping of saves and validations
on a loop that calls the iteration hooks at every step."""

from __future__ import annotations

import itertools

import pytest
from eta_toys import Schedule, use_clock
from hooks_a_stub_runner import HooksStubRunner
from runner_toy_model import toy_cfg, toy_iter_cfg

from treadle.runner import Runner
from treadle.runner.hooks import CheckpointHook, IterTimerHook
from treadle.runner.hooks.iter_timer_pauses import record_checkpoint_save
from treadle.runner.loops.dynamic_intervals import calc_dynamic_intervals, interval_at
from treadle.runner.loops.schedule_runs import validations_left


def _validations_by_rule(done, last, val_begin, milestones, intervals):
    """TrainLoopBase._validate_if_due, asked after each epoch/iteration from done + 1 on."""
    count = 0
    for progress in range(done + 1, last + 1):
        interval = interval_at(milestones, intervals, progress + 1)
        if progress < val_begin or (progress % interval and progress != last):
            continue
        count += 1
    return count


@pytest.mark.parametrize(
    ("val_interval", "dynamic"),
    [(1, None), (3, None), (4, [(5, 2)]), (2, [(3, 5), (11, 1), (14, 4)]), (7, [(1, 3)])],
)
def test_validations_left_follows_the_loop_rule(val_interval, dynamic):
    milestones, intervals = calc_dynamic_intervals(val_interval, dynamic)
    for last, val_begin in itertools.product((1, 9, 16, 20), (0, 1, 4, 12, 25)):
        for done in range(last + 1):
            expected = _validations_by_rule(done, last, val_begin, milestones, intervals)
            got = validations_left(done, last, val_begin, milestones, intervals)
            assert got == expected, (done, last, val_begin, milestones, intervals)


def _saves_by_rule(done, last, interval, save_begin, save_last):
    """CheckpointHook's rule for the steps (epochs or iterations) after ``done``."""
    count = 0
    for progress in range(done + 1, last + 1):
        since = progress - save_begin
        periodic = interval > 0 and since >= 0 and since % interval == 0
        count += periodic or (save_last and progress == last)
    return count


@pytest.mark.parametrize("by_epoch", [True, False])
def test_saves_left_follows_the_hook_rule(by_epoch):
    runner = HooksStubRunner.__new__(HooksStubRunner)
    for interval, save_begin, save_last in itertools.product(
        (-1, 1, 3, 5), (0, 2, 7), (True, False)
    ):
        hook = CheckpointHook(
            interval=interval, by_epoch=by_epoch, save_begin=save_begin, save_last=save_last
        )
        for last in (1, 6, 15):
            for done in range(last + 1):
                runner.epoch = runner.iter = done
                runner.max_epochs = runner.max_iters = last
                expected = _saves_by_rule(done, last, interval, save_begin, save_last)
                assert hook.saves_left(runner) == expected, (
                    interval,
                    save_begin,
                    save_last,
                    last,
                    done,
                )


def test_counts_match_what_an_iteration_based_run_does(tmp_path):
    schedule = Schedule()
    cfg = toy_iter_cfg(
        tmp_path,
        train_cfg=dict(
            by_epoch=False,
            max_iters=30,
            val_begin=4,
            val_interval=3,
            dynamic_intervals=[(12, 5), (20, 2)],
        ),
        param_scheduler=None,
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=10),
            checkpoint=dict(type="CheckpointHook", interval=4, by_epoch=False, save_begin=6),
        ),
        custom_hooks=[schedule],
    )
    Runner(**cfg).train()
    assert len(schedule.expected) == 30
    for iteration, validations, saves in schedule.expected:
        # Validation after iteration i runs with runner.iter == i + 1; a save after iteration
        # i from the after_train_iter hooks of i.
        assert validations == sum(v > iteration for v in schedule.validations), iteration
        assert saves == sum(s >= iteration for s in schedule.saves), iteration


def test_counts_match_what_an_epoch_based_run_does(tmp_path):
    schedule = Schedule()
    cfg = toy_cfg(
        tmp_path,
        train_cfg=dict(
            by_epoch=True, max_epochs=6, val_begin=2, val_interval=2, dynamic_intervals=[(4, 1)]
        ),
        param_scheduler=None,
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=10),
            checkpoint=dict(type="CheckpointHook", interval=4, save_begin=1, save_last=False),
        ),
        custom_hooks=[schedule],
    )
    Runner(**cfg).train()
    assert schedule.validations  # the run validated, and saved
    assert schedule.saves
    for iteration, validations, saves in schedule.expected:
        # After an epoch (validation, saves) runner.iter counts its last iteration as done.
        assert validations == sum(v > iteration for v in schedule.validations), iteration
        assert saves == sum(s > iteration for s in schedule.saves), iteration


def test_without_validation_none_is_counted(tmp_path):
    schedule = Schedule()
    cfg = toy_iter_cfg(
        tmp_path, val_dataloader=None, val_evaluator=None, val_cfg=None, custom_hooks=[schedule]
    )
    Runner(**cfg).train()
    assert [validations for _, validations, _ in schedule.expected] == [0] * 10


def test_a_save_is_left_out_of_the_next_iteration_when_every_step_calls_the_hooks(
    tmp_path, monkeypatch
):
    # A loop without step records (the hooks called at every iteration): the timer reads the
    # clock itself, and leaves out a save made by a later hook of the previous iteration.
    clock = use_clock(monkeypatch)
    runner = HooksStubRunner(tmp_path)
    timer = IterTimerHook()
    timer.before_train(runner)
    timer.before_train_epoch(runner)
    for iteration in range(3):
        runner.iter = iteration
        timer.before_train_iter(runner, iteration)
        clock.advance(2.0)
        timer.after_train_iter(runner, iteration)
        if iteration == 0:
            started = clock()
            clock.advance(7.0)
            record_checkpoint_save(runner, "iter_1.pth", started, async_save=False)
    times = runner.message_hub.get_scalar("train/time").data[0]
    assert list(map(float, times)) == [2.0, 2.0, 2.0]
    assert (timer.saves, timer.save_seconds) == (1, 7.0)


def test_a_save_during_validation_counts_as_validation_time(tmp_path, monkeypatch):
    clock = use_clock(monkeypatch)
    runner = HooksStubRunner(tmp_path)
    timer = IterTimerHook()
    timer.before_train(runner)
    timer.before_val(runner)
    clock.advance(4.0)
    started = clock()
    clock.advance(1.0)  # a best checkpoint
    record_checkpoint_save(runner, "best_acc_iter_1.pth", started, async_save=True)
    timer.after_val(runner)
    assert (timer.val_runs, timer.val_seconds) == (1, 5.0)
    assert timer.saves == 0


def test_the_save_log_names_the_file_and_its_duration(tmp_path, monkeypatch):
    from runner_toys import captured_log

    clock = use_clock(monkeypatch)
    runner = HooksStubRunner(tmp_path)
    with captured_log(runner.logger) as log:
        started = clock()
        clock.advance(0.25)
        assert record_checkpoint_save(runner, "epoch_3.pth", started, False) == 0.25
        record_checkpoint_save(runner, "epoch_4.pth", started, True)
    assert log.messages == [
        "Checkpoint epoch_3.pth saved in 0.25s",
        "Checkpoint epoch_4.pth handed to the background writer in 0.25s",
    ]
    assert runner.message_hub.get_info("checkpoint_saves")[:2] == (2, 0.5)
