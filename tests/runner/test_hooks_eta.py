"""The honest train ETA through a real Runner, on a clock the test controls (eta_toys): the
ETA counts the validation runs and checkpoint saves still to come at their measured
durations, the iteration times leave them out, and the log says how long each took."""

from __future__ import annotations

import logging

import pytest
from eta_toys import ClockedToyModel, EtaProbe, SlowSave, use_clock
from runner_toy_model import toy_cfg, toy_iter_cfg
from runner_toys import captured_log

from treadle.runner import Runner
from treadle.runner.hooks import IterTimerHook

# The val set: 12 samples in batches of 3, 4 batches; 5 s a batch makes a validation run as
# long as 20 training iterations of 1 s.
VAL_BATCH_COST = 5.0
VAL_RUN = 4 * VAL_BATCH_COST
SAVE_COST = 3.0


def _iter_runner(tmp_path, clock, probe_at: int, **overrides):
    cfg = toy_iter_cfg(
        tmp_path,
        model=ClockedToyModel(clock, train_cost=1.0, predict_cost=VAL_BATCH_COST),
        train_cfg=dict(by_epoch=False, max_iters=100, val_interval=10),
        param_scheduler=None,
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=10),
            checkpoint=dict(type="CheckpointHook", interval=25, by_epoch=False),
        ),
        custom_hooks=[SlowSave(clock, SAVE_COST), EtaProbe(clock, probe_at)],
        **overrides,
    )
    return Runner(**cfg)


def _probe(runner):
    return next(hook for hook in runner.hooks if isinstance(hook, EtaProbe))


def test_eta_at_half_training_counts_the_validations_and_saves_to_come(tmp_path, monkeypatch):
    clock = use_clock(monkeypatch)
    runner = _iter_runner(tmp_path, clock, probe_at=49)
    with captured_log(runner.logger) as log:
        runner.train()
    probe = _probe(runner)
    remaining = clock() - probe.time
    # After iteration 50: 50 iterations, 6 validations (60, 70, 80, 90, 100 and the one due
    # at 50) and 3 saves (50, 75, 100).
    assert remaining == pytest.approx(50 * 1.0 + 6 * VAL_RUN + 3 * SAVE_COST)
    assert probe.eta == pytest.approx(remaining, rel=0.10)
    # The log line of iteration 50 says the same: 179 s.
    line = next(m for m in log.messages if m.startswith("Iter(train) [ 50/100]"))
    assert "eta: 0:02:59" in line


def test_without_counting_them_the_eta_is_off_by_the_validation_time(tmp_path, monkeypatch):
    clock = use_clock(monkeypatch)
    monkeypatch.setattr(IterTimerHook, "pauses_left", lambda self, runner: 0.0)
    runner = _iter_runner(tmp_path, clock, probe_at=49)
    runner.train()
    probe = _probe(runner)
    remaining = clock() - probe.time
    # Only the iterations: short by the 6 validations and 3 saves to come.
    assert probe.eta == pytest.approx(50.0)
    assert remaining - probe.eta == pytest.approx(6 * VAL_RUN + 3 * SAVE_COST)
    assert abs(probe.eta - remaining) / remaining > 0.10


def test_iteration_times_leave_out_validation_and_saves_iter_based(tmp_path, monkeypatch):
    clock = use_clock(monkeypatch)
    runner = _iter_runner(tmp_path, clock, probe_at=99)
    runner.train()
    hub = runner.message_hub
    times = hub.get_scalar("train/time").data[0]
    data_times = hub.get_scalar("train/data_time").data[0]
    # Every iteration: 1 s of training, no waiting; the 10 validations and 4 saves in between
    # are carried by none of them.
    assert len(times) == 100
    assert set(map(float, times)) == {1.0}
    assert set(map(float, data_times)) == {0.0}
    timer = next(hook for hook in runner.hooks if isinstance(hook, IterTimerHook))
    assert (timer.val_runs, timer.val_seconds) == (10, 10 * VAL_RUN)
    assert (timer.saves, timer.save_seconds) == (4, 4 * SAVE_COST)


def test_epoch_based_eta_and_iteration_times(tmp_path, monkeypatch):
    clock = use_clock(monkeypatch)
    # 3 epochs of 4 iterations, validation and a save after each epoch.
    cfg = toy_cfg(
        tmp_path,
        model=ClockedToyModel(clock, train_cost=1.0, predict_cost=VAL_BATCH_COST),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=2),
            checkpoint=dict(type="CheckpointHook", interval=1),
        ),
        custom_hooks=[SlowSave(clock, SAVE_COST), EtaProbe(clock, at=5)],
    )
    runner = Runner(**cfg)
    runner.train()
    probe = _probe(runner)
    remaining = clock() - probe.time
    # After iteration 6 (epoch 2, batch 2): 6 iterations, 2 validations and 2 saves.
    assert remaining == pytest.approx(6 * 1.0 + 2 * VAL_RUN + 2 * SAVE_COST)
    assert probe.eta == pytest.approx(remaining)
    times = runner.message_hub.get_scalar("train/time").data[0]
    assert set(map(float, times)) == {1.0}


def test_eta_counts_a_validation_only_once_one_was_measured(tmp_path, monkeypatch):
    clock = use_clock(monkeypatch)
    runner = _iter_runner(tmp_path, clock, probe_at=8)  # before the first validation (at 10)
    runner.train()
    probe = _probe(runner)
    # 91 iterations left at 1 s; validations and saves are not measured yet: 0 s each.
    assert probe.eta == pytest.approx(91.0)


def test_the_log_says_how_long_each_validation_and_save_took(tmp_path, monkeypatch):
    clock = use_clock(monkeypatch)
    runner = _iter_runner(tmp_path, clock, probe_at=0)
    with captured_log(runner.logger) as log:
        runner.train()
    val_lines = [m for m in log.messages if m.startswith("Iter(val) [4/4]")]
    assert len(val_lines) == 10
    assert all(line.endswith("val_time: 20.0s") for line in val_lines)
    saves = log.at(logging.INFO)
    assert "Checkpoint iter_25.pth saved in 3.00s" in saves
    assert "Checkpoint iter_100.pth saved in 3.00s" in saves
    # The duration is in the line only: no scalar of it reaches the trackers.
    assert not any("val_time" in key for key in runner.message_hub.log_scalars)


def test_a_test_pass_reports_its_duration(tmp_path, monkeypatch):
    clock = use_clock(monkeypatch)
    cfg = toy_cfg(tmp_path, model=ClockedToyModel(clock, predict_cost=2.5))
    runner = Runner(**cfg)
    with captured_log(runner.logger) as log:
        runner.test()
    # The epoch line (after the per-iteration ones) ends with it.
    line = [m for m in log.messages if m.startswith("Epoch(test) [4/4]")][-1]
    assert "mse" in line
    assert line.endswith("test_time: 10.0s")
