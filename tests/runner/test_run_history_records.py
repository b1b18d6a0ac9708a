"""Issue 43: what a checkpoint records of its run (``meta['log_dir']``) and how a resumed run
finds that run again (treadle.runner.runner.run_history), checkpoints of MMEngine and of older
treadle included (the timestamp that ends their ``experiment_name``)."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace
from unittest.mock import Mock

from treadle.logging import Logger
from treadle.runner.runner.run_history import earlier_run_dir, record_resumed_run, run_log_dir
from treadle.visual import Visualizer


def test_the_run_folder_from_the_meta():
    assert run_log_dir({"log_dir": "/w/20240101_000000", "experiment_name": "x"}) == (
        "20240101_000000"
    )
    # MMEngine's checkpoints (and treadle's before 0.1.1): EXPERIMENT_TIMESTAMP.
    assert run_log_dir({"experiment_name": "digits_20261123_133501"}) == "20261123_133501"
    assert run_log_dir({"experiment_name": "digits"}) is None
    assert run_log_dir({}) is None


def test_the_earlier_run_is_looked_for_beside_the_checkpoint_then_where_it_was(tmp_path):
    moved, old, work = tmp_path / "moved", tmp_path / "old", tmp_path / "work"
    for folder in (moved / "20240101_000000", old / "20240101_000000", work / "20240101_000000"):
        folder.mkdir(parents=True)
    meta = {"log_dir": str(old / "20240101_000000")}
    checkpoint = str(moved / "epoch_1.pth")
    assert earlier_run_dir(checkpoint, meta, str(work)) == str(moved / "20240101_000000")
    elsewhere = str(tmp_path / "ckpts" / "epoch_1.pth")  # another out_dir
    assert earlier_run_dir(elsewhere, meta, str(work)) == str(old / "20240101_000000")
    meta = {"experiment_name": "x_20240101_000000"}
    assert earlier_run_dir(elsewhere, meta, str(work)) == str(work / "20240101_000000")
    assert earlier_run_dir("s3://bucket/epoch_1.pth", meta, str(work)) == str(
        work / "20240101_000000"
    )
    assert earlier_run_dir(elsewhere, meta, None) is None


def _runner(work_dir, name):
    log_dir = work_dir / name
    visualizer = Visualizer(
        name=f"history-{name}",
        vis_backends=[dict(type="LocalVisBackend")],
        save_dir=str(log_dir),
    )
    return SimpleNamespace(
        log_dir=str(log_dir), work_dir=str(work_dir), visualizer=visualizer, logger=Mock()
    )


def test_a_resume_records_the_run_it_continues(tmp_path):
    (tmp_path / "20240101_000000").mkdir()
    runner = _runner(tmp_path, "20240102_000000")
    meta = {"epoch": 3, "iter": 30, "experiment_name": "toy_20240101_000000"}
    record_resumed_run(runner, str(tmp_path / "epoch_3.pth"), meta)
    record = tmp_path / "20240102_000000" / "vis_data" / "resumed_from.json"
    assert json.loads(record.read_text())["run"] == "../../20240101_000000"
    (level, message), _ = runner.logger.log.call_args
    assert level == logging.INFO
    assert message.startswith(f"The curves of this run continue those of {tmp_path}")


def test_in_mmengine_style_the_line_is_a_debug_one_and_the_record_is_written(tmp_path, monkeypatch):
    # An MMEngine program (treadle.compat) logs MMEngine's INFO lines only.
    monkeypatch.setattr(Logger, "mmengine_style", True)
    (tmp_path / "20240101_000000").mkdir()
    runner = _runner(tmp_path, "20240102_000000")
    meta = {"epoch": 3, "iter": 30, "experiment_name": "toy_20240101_000000"}
    record_resumed_run(runner, str(tmp_path / "epoch_3.pth"), meta)
    assert (tmp_path / "20240102_000000" / "vis_data" / "resumed_from.json").is_file()
    (level, message), _ = runner.logger.log.call_args
    assert level == logging.DEBUG and message.startswith("The curves of this run continue")


def test_a_run_that_is_not_found_is_logged_and_nothing_recorded(tmp_path):
    runner = _runner(tmp_path, "20240102_000000")
    meta = {"epoch": 3, "iter": 30, "experiment_name": "toy_20240101_000000"}
    record_resumed_run(runner, str(tmp_path / "epoch_3.pth"), meta)
    assert not (tmp_path / "20240102_000000" / "vis_data" / "resumed_from.json").exists()
    (level, message), _ = runner.logger.log.call_args
    assert level == logging.INFO
    assert message.startswith("The curves of this run start after iteration 30: the run that")
    assert "its folder 20240101_000000 is in neither" in message


def test_a_runner_without_a_local_backend_records_nothing(tmp_path):
    runner = SimpleNamespace(log_dir=str(tmp_path), visualizer=Mock(), logger=Mock())
    record_resumed_run(runner, str(tmp_path / "epoch_3.pth"), {"iter": 3})
    assert list(tmp_path.iterdir()) == [] and not runner.logger.log.called
