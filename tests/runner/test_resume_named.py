"""A named checkpoint (``treadle train --resume PATH``, ``resume=True`` with ``load_from``) is
resumed exactly; the same command run again after a preemption goes on from the newer
checkpoints that its own run saved (same origin, same config); anything else, a changed
config or a run from elsewhere, does not replace the named one. The log says which and why.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from runner_toy_model import toy_cfg, unique_name
from runner_toys import captured_log

from treadle.config import Config
from treadle.runner.cli import main
from treadle.runner.runner import Runner


def cfg_of(work_dir: Path, **overrides) -> Config:
    return Config(toy_cfg(str(work_dir), experiment_name=unique_name("named"), **overrides))


def named(work_dir: Path, checkpoint: Path, **overrides) -> Runner:
    """A runner of the toy config told to resume ``checkpoint`` (MMEngine's way)."""
    return Runner.from_cfg(cfg_of(work_dir, resume=True, load_from=str(checkpoint), **overrides))


def started(runner: Runner) -> tuple[tuple[int, int], str]:
    """Where ``runner`` starts (epoch, iter), and the log line that says why."""
    with captured_log(runner.logger) as log:
        runner.load_or_resume()
    (line,) = [m for m in log.messages if m.startswith("resume:")]
    return (runner.epoch, runner.iter), line


def meta(path: Path) -> dict:
    return torch.load(path, weights_only=True, map_location="cpu")["meta"]


@pytest.fixture
def scratch(tmp_path) -> Path:
    """A work dir holding epoch_1..epoch_3 of a run from scratch."""
    work_dir = tmp_path / "x"
    Runner.from_cfg(cfg_of(work_dir)).train()
    assert meta(work_dir / "epoch_3.pth")["started_from"] is None
    return work_dir


def test_an_older_named_checkpoint_is_resumed_exactly(scratch):
    position, line = started(named(scratch, scratch / "epoch_1.pth"))
    assert position == (1, 4)
    assert f"continuing from {scratch / 'epoch_1.pth'}: the checkpoint named" in line
    assert f"newer {scratch / 'epoch_3.pth'}, but its run started from scratch" in line


def test_the_same_command_run_again_goes_on_from_its_own_newer_checkpoints(scratch):
    origin = os.path.realpath(scratch / "epoch_1.pth")
    named(scratch, scratch / "epoch_1.pth").train()  # rewrites epoch_2 and epoch_3
    assert meta(scratch / "epoch_3.pth")["started_from"] == origin
    (scratch / "epoch_3.pth").unlink()  # preempted before epoch 3 was saved

    requeued = named(scratch, scratch / "epoch_1.pth")
    position, line = started(requeued)
    assert position == (2, 8)
    assert f"continuing from {scratch / 'epoch_2.pth'}" in line
    assert "started from the named" in line and "same config" in line
    requeued.train()
    # A requeue's checkpoints keep the original origin, so the next requeue goes on too.
    assert meta(scratch / "epoch_3.pth")["started_from"] == origin
    assert started(named(scratch, scratch / "epoch_1.pth"))[0] == (3, 12)


def test_a_changed_config_resumes_the_named_checkpoint(scratch):
    named(scratch, scratch / "epoch_1.pth").train()
    lr = dict(type="OptimWrapper", optimizer=dict(type="SGD", lr=0.5))
    position, line = started(named(scratch, scratch / "epoch_1.pth", optim_wrapper=lr))
    assert position == (1, 4)
    assert "the checkpoint named" in line and "its run had another config" in line


def test_a_requeue_finds_its_run_after_the_named_checkpoint_was_removed(scratch):
    named(scratch, scratch / "epoch_1.pth").train()
    (scratch / "epoch_1.pth").unlink()  # max_keep_ckpts of the resumed run removed it
    position, line = started(named(scratch, scratch / "epoch_1.pth"))
    assert position == (3, 12) and "(which is gone)" in line


def test_resume_given_a_path_is_the_same_as_load_from(scratch):
    runner = Runner.from_cfg(cfg_of(scratch, resume=str(scratch / "epoch_2.pth")))
    assert started(runner)[0] == (2, 8)


def test_auto_resume_takes_the_newest_and_keeps_its_origin(scratch):
    origin = os.path.realpath(scratch / "epoch_1.pth")
    named(scratch, scratch / "epoch_1.pth").train()
    (scratch / "epoch_3.pth").unlink()
    auto = Runner.from_cfg(cfg_of(scratch, resume=True))
    auto.train()
    assert meta(scratch / "epoch_3.pth")["started_from"] == origin


def _cli_config(tmp_path: Path, **overrides) -> Path:
    config = tmp_path / "named_cfg.py"
    cfg = toy_cfg("unused", **overrides)
    del cfg["work_dir"], cfg["experiment_name"]
    config.write_text("".join(f"{key} = {value!r}\n" for key, value in cfg.items()))
    return config


def _train(config: Path, work_dir: Path, *args: str) -> int:
    argv = ["train", str(config), "--work-dir", str(work_dir), "--no-progress", *args]
    return main([*argv, "--cfg-options", f"experiment_name={unique_name('cli')}"])


def _resume_lines(work_dir: Path) -> list[str]:
    # Runs started in the same second share a log folder: the last line is the last run's.
    logs = sorted(work_dir.glob("*/*.log"), key=os.path.getmtime)
    return [line for line in logs[-1].read_text().splitlines() if "resume: continuing" in line]


def test_treadle_train_resume_path_takes_that_checkpoint(tmp_path):
    config, work_dir = _cli_config(tmp_path), tmp_path / "cli"
    assert _train(config, work_dir) == 0
    epoch_1 = work_dir / "epoch_1.pth"
    assert _train(config, work_dir, "--resume", str(epoch_1)) == 0
    line = _resume_lines(work_dir)[-1]
    assert f"continuing from {epoch_1}: the checkpoint named" in line
    assert meta(work_dir / "epoch_3.pth")["started_from"] == os.path.realpath(epoch_1)

    (work_dir / "epoch_3.pth").unlink()  # preempted; the same command again
    assert _train(config, work_dir, "--resume", str(epoch_1)) == 0
    line = _resume_lines(work_dir)[-1]
    assert f"continuing from {work_dir / 'epoch_2.pth'}" in line and "same config" in line

    # The same checkpoint named with another learning rate: resumed exactly.
    lr = "optim_wrapper.optimizer.lr=0.5"
    assert _train(config, work_dir, "--resume", str(epoch_1), "--cfg-options", lr) == 0
    line = _resume_lines(work_dir)[-1]
    assert f"continuing from {epoch_1}: the checkpoint named" in line
    assert "another config" in line


def test_the_config_fingerprint_ignores_how_a_run_is_launched():
    from treadle.runner.runner.config_fingerprint import config_fingerprint

    base = dict(model=dict(type="M"), optim=dict(lr=0.1), hook=object())
    launched = dict(base, work_dir="a", resume=True, load_from="x.pth", launcher="slurm")
    assert config_fingerprint(base) == config_fingerprint(launched)
    assert config_fingerprint(base) != config_fingerprint(dict(base, optim=dict(lr=0.2)))
    assert config_fingerprint(dict(work_dir="a")) is None  # nothing to tell runs apart by
