"""Asynchronous checkpoint writes of whole files (CheckpointIO(async_save=True)) and through
CheckpointHook(async_save=True): the written state is the one at save time, a save waits for the
one before it, errors come out of wait(), and a process that exits without waiting still leaves a
complete file. Sharded async saves are in test_strategies_fsdp_distributed.py."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest
import torch

from treadle.runner.checkpoint import find_latest_checkpoint
from treadle.runner.strategies import checkpoint_io
from treadle.runner.strategies.checkpoint_io import CheckpointIO


def test_the_file_holds_the_state_at_save_time(tmp_path):
    io = CheckpointIO()
    weights = torch.ones(4)
    io.save(
        {"state_dict": {"w": weights}, "meta": {"iter": 1}},
        str(tmp_path / "a.pth"),
        async_save=True,
    )
    weights.mul_(3)  # the next optimizer step, in place
    io.wait()
    saved = torch.load(tmp_path / "a.pth", weights_only=True)
    assert saved["state_dict"]["w"].tolist() == [1.0] * 4
    assert saved["meta"] == {"iter": 1}


def test_a_new_save_waits_for_the_previous_one(tmp_path, monkeypatch):
    release = threading.Event()
    order = []
    real_save = checkpoint_io.save_checkpoint

    def slow_save(checkpoint, path, backend_args=None):
        if path.endswith("first.pth"):
            release.wait(timeout=30)
        real_save(checkpoint, path, backend_args=backend_args)
        order.append(path.rsplit("/", 1)[-1])

    monkeypatch.setattr(checkpoint_io, "save_checkpoint", slow_save)
    io = CheckpointIO()
    io.save({"n": 1}, str(tmp_path / "first.pth"), async_save=True)
    second = threading.Thread(
        target=io.save, args=({"n": 2}, str(tmp_path / "second.pth")), kwargs={"async_save": True}
    )
    second.start()
    second.join(0.2)
    assert second.is_alive() and order == []  # blocked behind the first write
    release.set()
    second.join(30)
    io.wait()
    assert order == ["first.pth", "second.pth"]


def test_a_failed_background_write_is_raised_by_wait(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    io = CheckpointIO()
    io.save({"n": 1}, str(tmp_path / "file" / "a.pth"), async_save=True)
    with pytest.raises(OSError):
        io.wait()
    io.wait()  # reported once


def test_the_process_exits_cleanly_with_a_write_in_flight(tmp_path):
    script = (
        "import torch\n"
        "from treadle.runner.strategies.checkpoint_io import CheckpointIO\n"
        "io = CheckpointIO()\n"
        f"io.save({{'w': torch.ones(2_000_000)}}, {str(tmp_path / 'a.pth')!r}, async_save=True)\n"
        "print('returned')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "returned"
    assert torch.load(tmp_path / "a.pth", weights_only=True)["w"].shape == (2_000_000,)


def test_checkpoint_hook_async_save_through_the_runner(tmp_path):
    from runner_toy_model import toy_cfg

    from treadle.runner.runner import Runner

    cfg = toy_cfg(
        tmp_path,
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1, async_save=True)),
    )
    Runner(**cfg).train()
    assert find_latest_checkpoint(tmp_path) == str(tmp_path / "epoch_3.pth")
    for epoch in (1, 2, 3):
        saved = torch.load(tmp_path / f"epoch_{epoch}.pth", weights_only=False)
        assert saved["meta"]["epoch"] == epoch


def test_checkpoint_hook_async_save_must_be_a_bool():
    from treadle.runner.hooks import CheckpointHook

    with pytest.raises(TypeError, match="async_save must be a bool, got 'yes'"):
        CheckpointHook(async_save="yes")
