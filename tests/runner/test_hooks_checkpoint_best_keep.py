"""What CheckpointHook never deletes (Lightning #1150, #11379, #21813): the best checkpoint
(max_keep_ckpts rotates periodic ones only, and a new best is complete before the old one
goes), the checkpoint a run resumed from until a newer one is complete, and files in a folder
the run does not write to. Through real Runners, and a stub runner for the one case a real
run cannot reach."""

from __future__ import annotations

import os

import pytest
from hooks_b_stub_runner import StubRunner

from treadle.runner.hooks.checkpoint_hook import CheckpointHook

runner_module = pytest.importorskip("treadle.runner.runner")
Runner = runner_module.Runner

from best_checkpoint_toys import checkpoints, hooks, metric  # noqa: E402
from runner_toy_model import toy_cfg  # noqa: E402 (after the guard)


def epochs(n):
    return dict(by_epoch=True, max_epochs=n, val_interval=1)


def record_saves(runner, directory, watched):
    """Wrap runner.save_checkpoint: for each save, (file name, whether each of ``watched``
    exists while it is written)."""
    seen = []
    original = runner.save_checkpoint

    def save(out_dir, filename, *args, **kwargs):
        seen.append((filename, [os.path.exists(directory / name) for name in watched]))
        return original(out_dir, filename, *args, **kwargs)

    runner.save_checkpoint = save
    return seen


@pytest.mark.parametrize("best_with_state", [False, True])
def test_max_keep_ckpts_never_deletes_the_best(tmp_path, best_with_state):
    Runner(
        **toy_cfg(
            tmp_path,
            train_cfg=epochs(4),
            val_evaluator=metric(0.9, 0.1, 0.2, 0.3),
            default_hooks=hooks(
                interval=1, max_keep_ckpts=1, save_best="acc", best_with_state=best_with_state
            ),
        )
    ).train()
    assert checkpoints(tmp_path) == ["best_acc_epoch_1.pth", "epoch_4.pth"]


def test_the_new_best_is_complete_before_the_old_one_goes(tmp_path):
    runner = Runner(
        **toy_cfg(
            tmp_path,
            val_evaluator=metric(0.1, 0.5, 0.9),
            default_hooks=hooks(interval=1, save_best="acc"),
        )
    )
    seen = record_saves(runner, tmp_path, ["best_acc_epoch_1.pth"])
    runner.train()
    # The old best still exists while its replacement is written.
    assert ("best_acc_epoch_2.pth", [True]) in seen
    assert [n for n in checkpoints(tmp_path) if n.startswith("best")] == ["best_acc_epoch_3.pth"]


def test_a_failed_best_save_keeps_the_old_best(tmp_path):
    runner = Runner(
        **toy_cfg(
            tmp_path,
            val_evaluator=metric(0.1, 0.5),
            default_hooks=hooks(interval=1, save_best="acc"),
        )
    )
    original = runner.save_checkpoint

    def save(out_dir, filename, *args, **kwargs):
        if filename == "best_acc_epoch_2.pth":
            raise OSError(28, "No space left on device")
        return original(out_dir, filename, *args, **kwargs)

    runner.save_checkpoint = save
    with pytest.raises(OSError, match="No space left"):
        runner.train()
    assert "best_acc_epoch_1.pth" in checkpoints(tmp_path)
    info = runner.message_hub.runtime_info
    assert info["best_ckpt"] == str(tmp_path / "best_acc_epoch_1.pth")
    assert info["best_score"] == 0.1


def test_the_resumed_checkpoint_stays_until_a_newer_one_is_complete(tmp_path):
    Runner(**toy_cfg(tmp_path, default_hooks=hooks(interval=1, max_keep_ckpts=3))).train()
    assert checkpoints(tmp_path) == ["epoch_1.pth", "epoch_2.pth", "epoch_3.pth"]
    # A resume that keeps fewer: the surplus goes at once, the resumed one only after the
    # next checkpoint is written.
    runner = Runner(
        **toy_cfg(
            tmp_path,
            resume=True,
            train_cfg=epochs(4),
            default_hooks=hooks(interval=1, max_keep_ckpts=1),
        )
    )
    seen = record_saves(runner, tmp_path, ["epoch_3.pth", "epoch_2.pth"])
    runner.train()
    assert seen == [("epoch_4.pth", [True, False])]
    assert checkpoints(tmp_path) == ["epoch_4.pth"]


def test_resuming_from_another_folder_deletes_nothing_there_or_here(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    Runner(
        **toy_cfg(
            first,
            val_evaluator=metric(0.1, 0.5, 0.2),
            default_hooks=hooks(interval=1, max_keep_ckpts=1, save_best="acc"),
        )
    ).train()
    assert checkpoints(first) == ["best_acc_epoch_2.pth", "epoch_3.pth"]
    # Files of the same names in the new work dir that this run never wrote.
    second.mkdir()
    for name in ("epoch_1.pth", "epoch_2.pth"):
        (second / name).write_bytes(b"someone else's")
    runner = Runner(
        **toy_cfg(
            second,
            resume=str(first / "epoch_3.pth"),
            train_cfg=epochs(5),
            val_evaluator=metric(0.9, 0.3),
            default_hooks=hooks(interval=1, max_keep_ckpts=1, save_best="acc"),
        )
    )
    runner.train()
    assert checkpoints(first) == ["best_acc_epoch_2.pth", "epoch_3.pth"]
    assert checkpoints(second) == [
        "best_acc_epoch_4.pth",
        "epoch_1.pth",
        "epoch_2.pth",
        "epoch_5.pth",
    ]
    assert (second / "epoch_2.pth").read_bytes() == b"someone else's"


def test_the_resumed_checkpoint_is_kept_even_when_the_kept_list_drops_it(tmp_path):
    # A message hub whose kept steps end past the checkpoint the run resumed from (written by
    # another tool, or by hand): before_train drops the surplus, never the resumed file.
    runner = StubRunner(tmp_path)
    for step in (1, 2, 3):
        (tmp_path / f"epoch_{step}.pth").write_bytes(b"x")
    runner.message_hub.update_info("keep_ckpt_ids", [1, 2, 3])
    runner.message_hub.update_info("last_ckpt", str(tmp_path / "epoch_1.pth"))
    hook = CheckpointHook(interval=1, max_keep_ckpts=1)
    hook.before_train(runner)
    assert checkpoints(tmp_path) == ["epoch_1.pth", "epoch_3.pth"]
    # The next checkpoint replaces the newest kept one, as max_keep_ckpts=1 says.
    runner.epoch, runner.iter = 3, 15
    hook.after_train_epoch(runner)
    assert checkpoints(tmp_path) == ["epoch_1.pth", "epoch_4.pth"]


def test_the_same_folder_written_another_way_is_still_this_run_s(tmp_path, monkeypatch):
    # The first run wrote work_dir as a relative path, the resumed one as an absolute path:
    # the kept steps are still this folder's, and the surplus goes.
    monkeypatch.chdir(tmp_path)
    runner = StubRunner(tmp_path / "exp")
    for step in (1, 2):
        (tmp_path / "exp" / f"epoch_{step}.pth").write_bytes(b"x")
    runner.message_hub.update_info("keep_ckpt_ids", [1, 2])
    runner.message_hub.update_info("last_ckpt", os.path.join("exp", "epoch_2.pth"))
    CheckpointHook(interval=1, max_keep_ckpts=1).before_train(runner)
    assert checkpoints(tmp_path / "exp") == ["epoch_2.pth"]
