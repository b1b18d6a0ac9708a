"""CheckpointHook and LoggerHook next to MMEngine 0.10.7's: the same calls on the same stub
runner leave the same files, message hub entries and pointer, and ask for the same log lines at
the same steps. Skipped where mmengine is not installed (``hatch run mmengine:parity``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hooks_b_stub_runner import StubRunner, files

from treadle.runner.hooks.checkpoint_hook import CheckpointHook
from treadle.runner.hooks.logger_hook import LoggerHook

mmengine_hooks = pytest.importorskip("mmengine.hooks")

RUNTIME_KEYS = ("best_score", "best_ckpt", "keep_ckpt_ids", "last_ckpt")


def drive_checkpoints(hook, runner, metrics, by_epoch, steps, val_every):
    hook.before_train(runner)
    for step in range(steps):
        if by_epoch:
            runner.epoch, runner.iter = step, (step + 1) * 4 - 1
            hook.after_train_epoch(runner)
            runner.epoch, runner.iter = step + 1, (step + 1) * 4
        else:
            runner.iter, runner.epoch = step, step // 4
            hook.after_train_iter(runner, step % 4)
            runner.iter = step + 1
        if metrics and (step + 1) % val_every == 0:
            hook.after_val_epoch(runner, metrics.pop(0))
    hook.after_train(runner)


def outcome(runner, root):
    info = runner.message_hub.runtime_info
    hub = {key: info.get(key) for key in RUNTIME_KEYS}
    hub = {k: v.replace(str(root), "ROOT") if isinstance(v, str) else v for k, v in hub.items()}
    # MMEngine's pointer holds the full path, treadle's the name relative to the work dir:
    # both name the same file.
    text = Path(runner.work_dir, "last_checkpoint").read_text()
    pointer = str(Path(runner.work_dir, text)).replace(str(root), "ROOT")
    return files(runner.work_dir), hub, pointer


SCENARIOS = {
    "every epoch": dict(kwargs=dict(interval=1), by_epoch=True, steps=3),
    "interval 2 with last": dict(kwargs=dict(interval=2), by_epoch=True, steps=5),
    "no last": dict(kwargs=dict(interval=2, save_last=False), by_epoch=True, steps=5),
    "save_begin": dict(kwargs=dict(interval=2, save_begin=3), by_epoch=True, steps=6),
    "max_keep": dict(kwargs=dict(interval=1, max_keep_ckpts=2), by_epoch=True, steps=5),
    "by iter": dict(kwargs=dict(interval=3, by_epoch=False), by_epoch=False, steps=10),
    "best by epoch": dict(
        kwargs=dict(interval=1, save_best="acc", max_keep_ckpts=2),
        by_epoch=True,
        steps=4,
        metrics=[dict(acc=0.2), dict(acc=0.5), dict(acc=0.4), dict(acc=0.6)],
    ),
    "two bests": dict(
        kwargs=dict(interval=1, save_best=["acc", "loss"]),
        by_epoch=True,
        steps=3,
        metrics=[dict(acc=0.2, loss=3.0), dict(acc=0.1, loss=1.0), dict(acc=0.6, loss=2.0)],
    ),
    "best by iter": dict(
        kwargs=dict(interval=2, by_epoch=False, save_best="auto"),
        by_epoch=False,
        steps=8,
        val_every=2,
        metrics=[{"top1": 0.1}, {"top1": 0.3}, {"top1": 0.2}, {"top1": 0.4}],
    ),
}


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_checkpoint_hook_leaves_what_mmengine_leaves(tmp_path, name):
    scenario = SCENARIOS[name]
    results = []
    for side, hook_class in (("mm", mmengine_hooks.CheckpointHook), ("td", CheckpointHook)):
        root = tmp_path / side
        runner = StubRunner(
            root / "work", max_epochs=scenario["steps"], max_iters=scenario["steps"]
        )
        drive_checkpoints(
            hook_class(**scenario["kwargs"]),
            runner,
            [dict(m) for m in scenario.get("metrics", [])],
            scenario["by_epoch"],
            scenario["steps"],
            scenario.get("val_every", 1),
        )
        results.append(outcome(runner, root))
    assert results[1] == results[0]


def test_checkpoint_hook_difference_no_off_interval_checkpoint(tmp_path):
    # MMEngine writes epoch_3.pth to record a best found at epoch 3 although interval=2.
    listed = []
    for side, hook_class in (("mm", mmengine_hooks.CheckpointHook), ("td", CheckpointHook)):
        runner = StubRunner(tmp_path / side, max_epochs=4)
        metrics = [dict(acc=0.1), dict(acc=0.2), dict(acc=0.3), dict(acc=0.0)]
        drive_checkpoints(hook_class(interval=2, save_best="acc"), runner, metrics, True, 4, 1)
        listed.append([f for f in files(runner.work_dir) if f.startswith("epoch")])
    assert listed == [
        ["epoch_2.pth", "epoch_3.pth", "epoch_4.pth"],
        ["epoch_2.pth", "epoch_4.pth"],
    ]


class Recorder:
    def __init__(self) -> None:
        self.calls: list = []

    def add_scalars(self, tag, step=0, file_path=None):
        self.calls.append((dict(tag), step, file_path))

    def close(self) -> None:
        self.calls.append("close")


class LineRecorder:
    def __init__(self) -> None:
        self.messages: list[str] = []

    def info(self, message: str) -> None:
        self.messages.append(message)


@pytest.mark.parametrize(
    ("kwargs", "length"),
    [
        (dict(interval=2), 4),
        (dict(interval=2), 5),
        (dict(interval=2, ignore_last=False), 5),
        (dict(interval=7), 5),
        (dict(interval=1, interval_exp_name=3), 4),
        (dict(interval=3, log_metric_by_epoch=False), 7),
    ],
)
def test_logger_hook_logs_when_mmengine_logs(tmp_path, kwargs, length):
    results = []
    for side, hook_class in (("mm", mmengine_hooks.LoggerHook), ("td", LoggerHook)):
        runner = StubRunner(tmp_path / side, epoch_length=length)
        runner.visualizer = Recorder()
        runner.experiment_name = "exp"
        runner.logger = LineRecorder()
        hook = hook_class(**kwargs)
        hook.before_run(runner)
        for epoch in range(2):
            for batch_idx in range(length):
                runner.epoch, runner.iter = epoch, epoch * length + batch_idx
                hook.after_train_iter(runner, batch_idx)
            runner.epoch, runner.iter = epoch + 1, (epoch + 1) * length
            for batch_idx in range(len(runner.val_dataloader)):
                hook.after_val_iter(runner, batch_idx)
            hook.after_val_epoch(runner, dict(acc=0.5))
        hook.after_test_epoch(runner, dict(acc=0.5))
        hook.after_run(runner)
        results.append(
            (runner.log_processor.calls, runner.visualizer.calls, runner.logger.messages)
        )
        assert os.path.exists(os.path.join(runner.log_dir, f"{runner.timestamp}.json"))
    assert results[1] == results[0]
