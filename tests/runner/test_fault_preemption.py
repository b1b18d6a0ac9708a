"""Preemption with real signals: SIGTERM (and SIGUSR1 under SLURM) makes the README's main job
finish its iteration, save preempted.pth, point last_checkpoint at it and exit with status 75;
under SLURM it asks a stand-in ``scontrol`` to requeue the job; ``--resume`` continues the run
to the weights of a run that was never stopped."""

from __future__ import annotations

import os
import re
import signal
import time

import pytest
import torch

pytest.importorskip("sklearn")

from fault_kill import KillJob, assert_same_weights, context

from treadle.runner.runner.preemption import (
    EXIT_CODE,
    Preemption,
    TrainingPreempted,
    preemption_handlers,
)

LONG = ["train_cfg.max_epochs=25"]
THIRD_EPOCH = re.compile(r"Epoch\(train\)\s+\[3\]")


@pytest.fixture(scope="module")
def ctx():
    return context()


@pytest.fixture(scope="module")
def reference(ctx, tmp_path_factory):
    job = KillJob(tmp_path_factory.mktemp("ref") / "job", ctx=ctx, options=LONG)
    return job.run_uninterrupted(job.work_dir)


def _signal_when_training(job: KillJob, signum: int, log: str = "stopped.log") -> int:
    """Start the job, send ``signum`` once it trains its third epoch; its exit status."""
    process = job.start(job.work_dir, None, log)
    path = job.work_dir / log
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.exitcode is None:
        if path.exists() and THIRD_EPOCH.search(path.read_text()):
            os.kill(process.pid, signum)
            break
        time.sleep(0.01)
    process.join(120)
    assert process.exitcode is not None, "the run did not stop"
    return process.exitcode


def test_sigterm_saves_a_resumable_checkpoint_and_exits_75(ctx, tmp_path, reference):
    job = KillJob(tmp_path / "job", ctx=ctx, options=LONG)
    code = _signal_when_training(job, signal.SIGTERM)
    log = (job.work_dir / "stopped.log").read_text()
    assert code == EXIT_CODE, log[-3000:]
    saved = job.work_dir / "preempted.pth"
    assert "SIGTERM received: saving" in log and str(saved) in log
    assert (job.work_dir / "last_checkpoint").read_text() == saved.name  # relative
    meta = torch.load(saved, weights_only=True)["meta"]
    assert 24 < meta["iter"] < 25 * 12  # mid-training, after the iteration in progress
    # --resume continues from it, to the weights of the run that was never stopped.
    process = job.start(job.work_dir, None, "resumed.log")
    process.join(120)
    resumed = (job.work_dir / "resumed.log").read_text()
    assert process.exitcode == 0, resumed[-3000:]
    assert f"Auto resumed from the latest checkpoint {saved}" in resumed
    assert f"iter: {meta['iter']}" in resumed
    assert_same_weights(job.final_weights(), reference)


def test_under_slurm_sigusr1_requeues_through_scontrol(ctx, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "scontrol_calls"
    scontrol = bin_dir / "scontrol"
    scontrol.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    scontrol.chmod(0o755)
    env = {"SLURM_JOB_ID": "4242", "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    job = KillJob(tmp_path / "job", ctx=ctx, options=LONG, env=env)
    code = _signal_when_training(job, signal.SIGUSR1)
    log = (job.work_dir / "stopped.log").read_text()
    assert code == EXIT_CODE, log[-3000:]
    assert calls.read_text().split() == ["requeue", "4242"]
    assert "requeued SLURM job 4242" in log
    assert (job.work_dir / "preempted.pth").is_file()


@pytest.mark.parametrize(
    ("script", "words"),
    [
        (None, "cannot requeue SLURM job 4242: scontrol is not on PATH"),
        ("#!/bin/sh\necho 'Invalid job id' >&2\nexit 1\n", "scontrol requeue 4242 failed (1)"),
    ],
)
def test_a_requeue_that_fails_is_logged_and_the_checkpoint_kept(ctx, tmp_path, script, words):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if script is not None:
        (bin_dir / "scontrol").write_text(script)
        (bin_dir / "scontrol").chmod(0o755)
    env = {"SLURM_JOB_ID": "4242", "PATH": str(bin_dir)}
    job = KillJob(tmp_path / "job", ctx=ctx, options=LONG, env=env)
    assert _signal_when_training(job, signal.SIGUSR1) == EXIT_CODE
    log = (job.work_dir / "stopped.log").read_text()
    assert words in log
    assert (job.work_dir / "preempted.pth").is_file()


def test_exit_code_and_signals_come_from_the_config(ctx, tmp_path):
    options = [*LONG, "preemption.signals=[SIGINT]", "preemption.exit_code=3"]
    job = KillJob(tmp_path / "job", ctx=ctx, options=options)
    assert _signal_when_training(job, signal.SIGINT) == 3
    assert (job.work_dir / "preempted.pth").is_file()


# -- the handlers themselves, in this process


class _Runner:
    _train_loop = None
    work_dir = "."
    hooks = ()


def test_handlers_are_installed_for_the_block_only():
    before = signal.getsignal(signal.SIGTERM)
    with preemption_handlers(_Runner()) as preemption:
        assert signal.getsignal(signal.SIGTERM) == preemption._on_signal
    assert signal.getsignal(signal.SIGTERM) == before


def test_sigusr1_is_handled_only_under_slurm(monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    assert Preemption(_Runner()).handled == [signal.SIGTERM]
    monkeypatch.setenv("SLURM_JOB_ID", "7")
    assert Preemption(_Runner()).handled == [signal.SIGTERM, signal.SIGUSR1]
    assert Preemption(_Runner(), dict(enable=False)).settings["enable"] is False


def test_training_preempted_is_a_system_exit():
    stop = TrainingPreempted(75, "SIGTERM", "w/preempted.pth")
    assert isinstance(stop, SystemExit) and stop.code == 75 and stop.checkpoint.endswith(".pth")


@pytest.mark.parametrize(
    ("cfg", "error", "words"),
    [
        (dict(signals=["SIGNOPE"]), ValueError, "preemption.signals: 'SIGNOPE' is not a signal"),
        (dict(slurm_signals=[3.5]), ValueError, "preemption.slurm_signals: 3.5"),
        (dict(exit_code=0), ValueError, "preemption.exit_code must be an int from 1 to 255"),
        (dict(exit_code="75"), ValueError, "preemption.exit_code"),
        (dict(requeu=True), KeyError, "preemption: unknown key(s) ['requeu']"),
    ],
)
def test_bad_preemption_settings_are_named(cfg, error, words):
    with pytest.raises(error) as caught:
        Preemption(_Runner(), cfg)
    assert words in str(caught.value)


def test_signal_names_may_omit_sig():
    assert Preemption(_Runner(), dict(signals=["term", 10])).settings["signals"] == [
        signal.SIGTERM,
        signal.SIGUSR1,
    ]


def test_the_pointer_names_an_existing_file_after_preemption(ctx, tmp_path):
    job = KillJob(tmp_path / "job", ctx=ctx, options=LONG)
    _signal_when_training(job, signal.SIGTERM)
    named = job.work_dir / (job.work_dir / "last_checkpoint").read_text()
    assert named.is_file() and named.name == "preempted.pth"
