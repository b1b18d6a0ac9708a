"""LoggerHook through a real Runner on the toy model: the lines in the log file, the scalars in
scalars.json (train at iterations, val at epochs), and the test results file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

runner_module = pytest.importorskip("treadle.runner.runner")
Runner = getattr(runner_module, "Runner", None)
if Runner is None:
    pytest.skip("treadle.runner.runner has no Runner yet", allow_module_level=True)

from runner_toy_model import toy_cfg  # noqa: E402 (after the guard)


def logger_hooks(**logger):
    return dict(logger=dict(type="LoggerHook", **logger), checkpoint=dict(type="CheckpointHook"))


def scalars(runner):
    path = Path(runner.log_dir, "vis_data", "scalars.json")
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_train_and_val_lines_and_scalars(tmp_path):
    runner = Runner(**toy_cfg(tmp_path, default_hooks=logger_hooks(interval=3, ignore_last=False)))
    runner.train()
    log = Path(runner.log_dir, f"{runner.timestamp}.log").read_text()
    train = re.findall(r"Epoch\(train\) \[(\d)\]\[(\d)/4\]", log)
    # Every 3rd batch, and the 4th (last) one since ignore_last=False.
    assert train == [(e, b) for e in "123" for b in "34"]
    assert log.count(f"Exp name: {runner.experiment_name}") == 3
    lines = scalars(runner)
    train_steps = [line["step"] for line in lines if "loss" in line]
    assert train_steps == [3, 4, 7, 8, 11, 12]
    val = [line for line in lines if "acc" in line]
    assert [line["step"] for line in val] == [1, 2, 3]  # by epoch
    assert "val/time" in val[0] and "time" not in val[0]
    assert {"lr", "loss", "time", "data_time"} <= set(lines[0])


def test_val_metrics_by_iteration(tmp_path):
    runner = Runner(**toy_cfg(tmp_path, default_hooks=logger_hooks(log_metric_by_epoch=False)))
    runner.train()
    val = [line for line in scalars(runner) if "acc" in line]
    assert [line["step"] for line in val] == [4, 8, 12]


def test_test_results_file(tmp_path):
    runner = Runner(**toy_cfg(tmp_path, default_hooks=logger_hooks()))
    runner.test()
    results = json.loads(Path(runner.log_dir, f"{runner.timestamp}.json").read_text())
    assert set(results) == {"acc", "mse", "test/time", "test/data_time"}
