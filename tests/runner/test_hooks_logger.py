"""LoggerHook driven by a stub runner: when it asks the log processor for a line, what reaches
the logger and scalars.json, the test results file, copying logs to out_dir (local and S3),
and every argument error."""

from __future__ import annotations

import json
import os

import pytest
from hooks_b_stub_runner import StubRunner
from runner_toys import captured_log
from s3_server import bucket, moto_endpoint  # noqa: F401 (fixtures)

from treadle import fileio
from treadle.runner.hooks.logger_hook import LoggerHook
from treadle.runner.registry import HOOKS


def run_train_iters(runner, hook, epochs=1):
    length = len(runner.train_dataloader)
    for epoch in range(epochs):
        runner.epoch = epoch
        for batch_idx in range(length):
            runner.iter = epoch * length + batch_idx
            hook.after_train_iter(runner, batch_idx)


def scalar_lines(runner, name="scalars.json"):
    runner.visualizer.close()
    path = os.path.join(runner.log_dir, "vis_data", name)
    with open(path) as file:
        return [json.loads(line) for line in file]


@pytest.fixture
def runner(tmp_path):
    return StubRunner(tmp_path / "work", epoch_length=4)


def test_is_registered_with_mmengine_priority():
    hook = HOOKS.build(dict(type="LoggerHook", interval=5))
    assert isinstance(hook, LoggerHook) and hook.priority == "BELOW_NORMAL"


def test_train_lines_at_each_interval_only(runner):
    hook = LoggerHook(interval=2)
    hook.before_run(runner)
    with captured_log() as log:
        run_train_iters(runner, hook, epochs=2)
    # The log processor (the only place losses become numbers) is asked on logging steps only.
    assert runner.log_processor.calls == [(1, "train"), (3, "train")] * 2
    assert [m for m in log.messages if "line" in m] == ["train line 1", "train line 3"] * 2
    lines = scalar_lines(runner)
    assert [line["step"] for line in lines] == [2, 4, 6, 8]
    # issue 20: the training iteration is in every line, as "iter" (the stub's tag lacks it).
    assert lines[0] == {"loss": 1.0, "lr": 0.1, "step": 2, "iter": 2}
    # The same lines in the run's own json file, as MMEngine writes.
    assert hook.json_log_path == "20260101_000000.json"
    assert scalar_lines(runner, hook.json_log_path) == lines


@pytest.mark.parametrize(
    ("ignore_last", "length", "interval", "logged"),
    [
        (True, 5, 2, [1, 3]),
        (False, 5, 2, [1, 3, 4]),
        # An epoch shorter than the interval still gets its line.
        (True, 3, 5, [2]),
    ],
)
def test_ignore_last(tmp_path, ignore_last, length, interval, logged):
    runner = StubRunner(tmp_path, epoch_length=length)
    hook = LoggerHook(interval=interval, ignore_last=ignore_last)
    hook.before_run(runner)
    run_train_iters(runner, hook)
    assert [batch for batch, _ in runner.log_processor.calls] == logged


def test_experiment_name_every_n_iters_and_at_epoch_end(runner):
    hook = LoggerHook(interval=100, interval_exp_name=3)
    hook.before_run(runner)
    with captured_log() as log:
        run_train_iters(runner, hook, epochs=2)
    exp = [m for m in log.messages if m.startswith("Exp name:")]
    # Iterations 3 and 6 (the 3rd and 6th), and the end of both epochs (4th and 8th).
    assert exp == [f"Exp name: {runner.experiment_name}"] * 4


def test_val_and_test_iteration_lines(runner):
    hook = LoggerHook(interval=2)
    with captured_log() as log:
        for batch_idx in range(4):
            hook.after_val_iter(runner, batch_idx)
            hook.after_test_iter(runner, batch_idx)
    assert runner.log_processor.calls == [(1, "val"), (1, "test"), (3, "val"), (3, "test")]
    assert "val line 3" in log.messages and "test line 1" in log.messages


@pytest.mark.parametrize(("by_epoch", "step"), [(True, 2), (False, 8)])
def test_val_epoch_scalars_at_the_training_position(runner, by_epoch, step):
    hook = LoggerHook(log_metric_by_epoch=by_epoch)
    hook.before_run(runner)
    runner.epoch, runner.iter = 2, 8
    with captured_log() as log:
        hook.after_val_epoch(runner, dict(acc=0.5))
    assert runner.log_processor.calls == [(2, "val-epoch")]
    assert "val epoch line" in log.messages
    # issue 20: the training iteration is in every line, as "iter".
    assert scalar_lines(runner) == [{"val/acc": 0.5, "step": step, "iter": 8}]


def test_val_without_a_train_loop_counts_zero(tmp_path):
    runner = StubRunner(tmp_path, with_train_loop=False)
    runner.epoch = 5  # never read: a val-only run must not build the train loop
    hook = LoggerHook()
    hook.before_run(runner)
    hook.after_val_epoch(runner, dict(acc=0.5))
    assert scalar_lines(runner)[0]["step"] == 0


def test_test_epoch_writes_json_ready_results(runner):
    hook = LoggerHook()
    hook.before_run(runner)
    hook.after_test_epoch(runner, dict(acc=0.5))
    with open(os.path.join(runner.log_dir, "20260101_000000.json")) as file:
        results = json.load(file)
    # Tensors become lists; what JSON cannot hold becomes null.
    assert results == {"test/acc": 0.5, "test/confusion": [[1, 0], [0, 1]], "test/opaque": None}


def test_after_run_closes_the_visualizer(runner, monkeypatch):
    closed = []
    monkeypatch.setattr(runner.visualizer, "close", lambda: closed.append(True))
    hook = LoggerHook()
    hook.before_run(runner)
    hook.after_run(runner)
    assert closed == [True]


def write_logs(runner):
    runner.logger.info("a line in the log file")
    os.makedirs(os.path.join(runner.log_dir, "vis_data"), exist_ok=True)
    with open(os.path.join(runner.log_dir, "vis_data", "config.py"), "w") as file:
        file.write("lr = 0.1\n")
    with open(os.path.join(runner.log_dir, "ignored.bin"), "wb") as file:
        file.write(b"\0")


def test_out_dir_receives_the_logs(runner, tmp_path):
    hook = LoggerHook(out_dir=str(tmp_path / "logs"))
    with captured_log() as log:
        hook.before_run(runner)
    assert hook.out_dir == str(tmp_path / "logs" / "work")
    assert any("Text logs will be saved to" in m for m in log.messages)
    write_logs(runner)
    hook.after_train_iter(runner, 3)  # the last batch: a line, so scalars.json exists
    hook.after_run(runner)
    out = tmp_path / "logs" / "work"
    copied = sorted(
        os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs
    )
    assert copied == [
        "20260101_000000.log",
        "vis_data/20260101_000000.json",
        "vis_data/config.py",
        "vis_data/scalars.json",
    ]
    assert "a line in the log file" in (out / "20260101_000000.log").read_text()
    assert os.path.exists(os.path.join(runner.log_dir, "20260101_000000.log"))


def test_keep_local_false_removes_the_copied_files(runner, tmp_path):
    hook = LoggerHook(out_dir=tmp_path / "logs", keep_local=False, out_suffix=".log")
    hook.before_run(runner)
    write_logs(runner)
    with captured_log() as log:
        hook.after_run(runner)
    local = os.path.join(runner.log_dir, "20260101_000000.log")
    assert not os.path.exists(local)
    assert (tmp_path / "logs" / "work" / "20260101_000000.log").exists()
    assert os.path.exists(os.path.join(runner.log_dir, "vis_data", "config.py"))
    assert any("was removed due to the `self.keep_local=False`" in m for m in log.messages)


def test_out_dir_on_s3(runner, bucket):  # noqa: F811 (the imported fixture)
    hook = LoggerHook(out_dir=f"s3://{bucket}/logs")
    hook.before_run(runner)
    write_logs(runner)
    hook.after_run(runner)
    out = f"s3://{bucket}/logs/work"
    assert "a line in the log file" in fileio.get_text(f"{out}/20260101_000000.log")
    assert fileio.get_text(f"{out}/vis_data/config.py") == "lr = 0.1\n"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(interval="10"), TypeError, r"interval must be an integer, got '10'"),
        (dict(interval=0), ValueError, r"interval must be greater than 0, got 0"),
        (dict(ignore_last=1), TypeError, r"ignore_last must be a boolean, got 1"),
        (dict(interval_exp_name=-5), ValueError, r"interval_exp_name must be greater than 0"),
        (dict(out_dir=3), TypeError, r"out_dir must be a str or Path object, got 3"),
        (dict(keep_local="no"), TypeError, r"keep_local must be a boolean, got 'no'"),
        (dict(file_client_args={}), ValueError, r"file_client_args should be \"None\" when"),
        (
            dict(out_dir="x", file_client_args=dict(backend="local"), backend_args={}),
            ValueError,
            r'"file_client_args" and "backend_args" cannot be set at the same time',
        ),
        (dict(out_suffix=[".log", 3]), TypeError, r"out_suffix should be a string or a sequence"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        LoggerHook(**kwargs)


def test_a_second_run_uses_the_same_out_dir(runner, tmp_path):
    hook = LoggerHook(out_dir=str(tmp_path / "logs"))
    hook.before_run(runner)
    hook.before_run(runner)
    assert hook.out_dir == str(tmp_path / "logs" / "work")
