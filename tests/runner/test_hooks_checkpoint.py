"""CheckpointHook driven by a stub runner: which files it leaves, what the message hub keeps,
publishing, out_dir on a local folder and on S3 (moto on loopback), and every argument error."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import pytest
import torch
from hooks_b_stub_runner import StubRunner, files
from runner_toys import captured_log
from s3_server import bucket, moto_endpoint  # noqa: F401 (fixtures)

from treadle import fileio
from treadle.runner.checkpoint import find_latest_checkpoint
from treadle.runner.hooks import checkpoint_hook as checkpoint_hook_module
from treadle.runner.hooks.checkpoint_hook import CheckpointHook
from treadle.runner.registry import HOOKS


def train_by_epoch(runner, hook, metrics=None, epochs=None):
    """The calls of an epoch-based loop: after_train_epoch, then validation with the i-th
    metrics (after the loop has counted the epoch)."""
    hook.before_train(runner)
    for epoch in range(epochs or runner.max_epochs):
        runner.epoch = epoch
        runner.iter = (epoch + 1) * 4 - 1
        hook.after_train_epoch(runner)
        runner.epoch, runner.iter = epoch + 1, (epoch + 1) * 4
        if metrics is not None:
            hook.after_val_epoch(runner, metrics[min(epoch, len(metrics) - 1)])
    hook.after_train(runner)


def train_by_iter(runner, hook, metrics=None, val_interval=4):
    hook.before_train(runner)
    for it in range(runner.max_iters):
        runner.iter, runner.epoch = it, it // 4
        hook.after_train_iter(runner, it % 4)
        runner.iter = it + 1
        if metrics is not None and (it + 1) % val_interval == 0:
            hook.after_val_epoch(runner, metrics.pop(0))
    hook.after_train(runner)


def load(path):
    return torch.load(path, weights_only=True)


@pytest.fixture
def runner(tmp_path):
    return StubRunner(tmp_path / "work")


# --- periodic and last checkpoints ---


def test_is_registered_with_mmengine_priority():
    hook = HOOKS.build(dict(type="CheckpointHook", interval=2))
    assert isinstance(hook, CheckpointHook)
    assert hook.priority == "VERY_LOW"


def test_every_epoch_writes_files_meta_and_pointer(runner):
    hook = CheckpointHook(interval=1)
    train_by_epoch(runner, hook)
    assert files(runner.work_dir) == [
        "epoch_1.pth",
        "epoch_2.pth",
        "epoch_3.pth",
        "last_checkpoint",
    ]
    last = os.path.join(runner.work_dir, "epoch_3.pth")
    # Relative to the work dir, so that a copied work dir resumes its own files.
    assert Path(runner.work_dir, "last_checkpoint").read_text() == "epoch_3.pth"
    assert load(last)["meta"] == dict(epoch=3, iter=11)
    assert runner.message_hub.get_info("last_ckpt") == last
    assert find_latest_checkpoint(runner.work_dir) == last
    assert [s["save_optimizer"] for s in runner.saved] == [True] * 3


def test_interval_and_save_last(runner, tmp_path):
    train_by_epoch(runner, CheckpointHook(interval=2))
    assert files(runner.work_dir) == ["epoch_2.pth", "epoch_3.pth", "last_checkpoint"]
    other = StubRunner(tmp_path / "other")
    train_by_epoch(other, CheckpointHook(interval=2, save_last=False))
    assert files(other.work_dir) == ["epoch_2.pth", "last_checkpoint"]


def test_default_interval_saves_only_the_last(runner):
    train_by_epoch(runner, CheckpointHook())
    assert files(runner.work_dir) == ["epoch_3.pth", "last_checkpoint"]


def test_save_begin(tmp_path):
    runner = StubRunner(tmp_path, max_epochs=5)
    train_by_epoch(runner, CheckpointHook(interval=2, save_begin=2, save_last=False))
    # Counted from epoch 2: epochs 2 and 4.
    assert files(tmp_path) == ["epoch_2.pth", "epoch_4.pth", "last_checkpoint"]


def test_by_iteration(runner):
    hook = CheckpointHook(interval=5, by_epoch=False)
    train_by_iter(runner, hook)
    assert files(runner.work_dir) == ["iter_10.pth", "iter_12.pth", "iter_5.pth", "last_checkpoint"]
    assert load(os.path.join(runner.work_dir, "iter_5.pth"))["meta"] == dict(epoch=1, iter=5)
    # An iteration-based hook does nothing at epoch ends, and the reverse.
    runner.epoch = 0
    hook.after_train_epoch(runner)
    epoch_hook = CheckpointHook(interval=1)
    epoch_hook.after_train_iter(runner, 0)
    assert len(runner.saved) == 3


def test_filename_tmpl_and_extra_arguments(runner):
    hook = CheckpointHook(interval=1, filename_tmpl="model_{}.pth", save_optimizer=False, extra=1)
    train_by_epoch(runner, hook, epochs=1)
    assert files(runner.work_dir) == ["last_checkpoint", "model_1.pth"]
    assert runner.saved[0]["kwargs"] == {"extra": 1}
    assert "optimizer" not in load(os.path.join(runner.work_dir, "model_1.pth"))


# --- max_keep_ckpts ---


def test_max_keep_ckpts_leaves_the_newest(tmp_path):
    runner = StubRunner(tmp_path, max_epochs=5)
    train_by_epoch(runner, CheckpointHook(interval=1, max_keep_ckpts=2))
    assert files(tmp_path) == ["epoch_4.pth", "epoch_5.pth", "last_checkpoint"]
    assert runner.message_hub.get_info("keep_ckpt_ids") == [4, 5]
    # The checkpoint holds the kept steps as they are once it is on disk.
    hub = load(tmp_path / "epoch_5.pth")["message_hub"]
    assert hub["runtime_info"]["keep_ckpt_ids"] == [4, 5]


def test_max_keep_ckpts_after_resume_drops_the_surplus(tmp_path):
    runner = StubRunner(tmp_path, max_epochs=3)
    train_by_epoch(runner, CheckpointHook(interval=1, max_keep_ckpts=3))
    assert files(tmp_path) == ["epoch_1.pth", "epoch_2.pth", "epoch_3.pth", "last_checkpoint"]
    # Resumed with a smaller max_keep_ckpts: the oldest go before training goes on.
    hook = CheckpointHook(interval=1, max_keep_ckpts=1)
    hook.before_train(runner)
    assert files(tmp_path) == ["epoch_3.pth", "last_checkpoint"]
    assert list(hook.keep_ckpt_ids) == [3]


def test_only_the_main_process_deletes_and_moves_the_pointer(tmp_path, monkeypatch):
    runner = StubRunner(tmp_path, max_epochs=3)
    monkeypatch.setattr(checkpoint_hook_module, "is_main_process", lambda: False)
    train_by_epoch(runner, CheckpointHook(interval=1, max_keep_ckpts=1))
    # Every rank calls runner.save_checkpoint (it may gather shards); rank 0 alone cleans up.
    assert files(tmp_path) == ["epoch_1.pth", "epoch_2.pth", "epoch_3.pth"]


# --- save_best ---


def test_save_best_keeps_one_file_and_the_state(runner):
    metrics = [dict(acc=0.1), dict(acc=0.3), dict(acc=0.2)]
    with captured_log() as log:
        train_by_epoch(runner, CheckpointHook(interval=1, save_best="acc"), metrics)
    work = runner.work_dir
    assert files(work) == [
        "best_acc_epoch_2.pth",
        "epoch_1.pth",
        "epoch_2.pth",
        "epoch_3.pth",
        "last_checkpoint",
    ]
    assert runner.message_hub.get_info("best_score") == 0.3
    assert runner.message_hub.get_info("best_ckpt") == os.path.join(work, "best_acc_epoch_2.pth")
    best = load(os.path.join(work, "best_acc_epoch_2.pth"))
    assert "optimizer" not in best and best["meta"] == dict(epoch=2, iter=8)
    # epoch_2.pth was written again after validation: it knows the new best.
    assert (
        load(os.path.join(work, "epoch_2.pth"))["message_hub"]["runtime_info"]["best_score"] == 0.3
    )
    assert any("is removed" in m and "best_acc_epoch_1.pth" in m for m in log.messages)
    assert any("The best checkpoint with 0.3000 acc at 2 epoch" in m for m in log.messages)


def test_save_best_resumed_removes_the_old_best(tmp_path):
    runner = StubRunner(tmp_path, max_epochs=2)
    train_by_epoch(runner, CheckpointHook(interval=1, save_best="acc"), [dict(acc=0.5)])
    assert "best_acc_epoch_1.pth" in files(tmp_path)
    # The same message hub (as a resume restores it) and a new hook: a better score replaces
    # the file the previous run kept, a worse one keeps it.
    hook = CheckpointHook(interval=1, save_best="acc")
    hook.before_train(runner)
    assert hook.best_ckpt_path == str(tmp_path / "best_acc_epoch_1.pth")
    runner.epoch = 3
    hook.after_val_epoch(runner, dict(acc=0.4))
    assert "best_acc_epoch_1.pth" in files(tmp_path)
    hook.after_val_epoch(runner, dict(acc=0.9))
    assert [f for f in files(tmp_path) if f.startswith("best")] == ["best_acc_epoch_3.pth"]


def test_save_best_several_keys_and_rules(runner):
    metrics = [dict(acc=0.5, loss=1.0), dict(acc=0.4, loss=0.5), dict(acc=0.6, loss=0.7)]
    hook = CheckpointHook(save_best=["acc", "loss"], rule=["greater", "less"])
    train_by_epoch(runner, hook, metrics)
    best = [f for f in files(runner.work_dir) if f.startswith("best")]
    assert best == ["best_acc_epoch_3.pth", "best_loss_epoch_2.pth"]
    info = runner.message_hub.runtime_info
    assert (info["best_score_acc"], info["best_score_loss"]) == (0.6, 0.5)
    assert info["best_ckpt_loss"].endswith("best_loss_epoch_2.pth")
    assert set(hook.best_ckpt_path_dict) == {"acc", "loss"}


def test_save_best_by_iteration_and_slash_in_key(runner):
    metrics = [{"accuracy/top1": 0.2}, {"accuracy/top1": 0.1}, {"accuracy/top1": 0.7}]
    hook = CheckpointHook(interval=100, by_epoch=False, save_best="accuracy/top1", save_last=False)
    train_by_iter(runner, hook, metrics)
    assert files(runner.work_dir) == ["best_accuracy_top1_iter_12.pth"]


def test_save_best_auto_takes_the_first_metric(runner):
    hook = CheckpointHook(save_best="auto")
    train_by_epoch(runner, hook, [dict(loss=2.0, acc=0.1), dict(loss=1.0, acc=0.2)])
    assert (hook.key_indicators, hook.rules) == (["loss"], ["less"])
    assert [f for f in files(runner.work_dir) if f.startswith("best")] == ["best_loss_epoch_2.pth"]


def test_rule_inference():
    hook = CheckpointHook(save_best=["mAP", "val_loss", "top1_acc"])
    assert hook.rules == ["greater", "less", "greater"]
    custom = CheckpointHook(save_best="fid", less_keys=["fid"])
    assert custom.rules == ["less"]
    with pytest.raises(ValueError, match=r"greater or a smaller 'fid' is better: set rule="):
        CheckpointHook(save_best="fid")
    with pytest.raises(ValueError, match=r"rule must be 'greater', 'less' or None, got 'bigger'"):
        CheckpointHook(save_best="acc", rule="bigger")


def test_save_best_auto_with_an_unknown_first_metric_names_it(runner):
    hook = CheckpointHook(save_best="auto")
    hook.before_train(runner)
    with pytest.raises(ValueError, match=r"'fid' is better"):
        hook.after_val_epoch(runner, dict(fid=3.0))


def test_save_best_metric_missing_names_the_returned_ones(runner):
    hook = CheckpointHook(save_best="accuracy")
    hook.before_train(runner)
    with pytest.raises(KeyError, match=r"save_best names 'accuracy'.*\['acc', 'mse'\].*'acc'"):
        hook.after_val_epoch(runner, dict(acc=0.5, mse=1.0))


def test_empty_metrics_warn_and_save_nothing(runner):
    hook = CheckpointHook(save_best="acc")
    hook.before_train(runner)
    with captured_log() as log:
        hook.after_val_epoch(runner, {})
    assert any("empty dict" in m for m in log.at(logging.WARNING))
    assert runner.saved == []


def test_save_best_stores_plain_numbers(runner):
    np = pytest.importorskip("numpy")
    hook = CheckpointHook(save_best="acc")
    hook.before_train(runner)
    hook.after_val_epoch(runner, dict(acc=np.float64(0.5)))
    assert type(runner.message_hub.get_info("best_score")) is float


# --- publishing ---


def test_published_keys_write_a_hashed_copy(runner):
    hook = CheckpointHook(interval=1, save_best="acc", published_keys=["meta", "state_dict"])
    with captured_log() as log:
        train_by_epoch(runner, hook, [dict(acc=0.5)], epochs=1)
    published = [f for f in files(runner.work_dir) if "-" in f]
    assert len(published) == 2  # the last and the best
    for name in published:
        path = os.path.join(runner.work_dir, name)
        data = Path(path).read_bytes()
        # The suffix is the hash of the file itself, as torch.hub's check_hash expects.
        assert name.rsplit("-", 1)[1] == hashlib.sha256(data).hexdigest()[:8] + ".pth"
        assert sorted(load(path)) == ["meta", "state_dict"]
    assert any("leaving out ['message_hub', 'optimizer']" in m for m in log.messages)


# --- out_dir ---


def test_out_dir_gets_a_folder_named_after_the_work_dir(runner, tmp_path):
    hook = CheckpointHook(interval=1, out_dir=tmp_path / "ckpts", max_keep_ckpts=1)
    train_by_epoch(runner, hook)
    out = tmp_path / "ckpts" / "work"
    assert files(out) == ["epoch_3.pth", "last_checkpoint"]
    # .checkpoint_out_dir: where a resume looks before the first pointer exists.
    assert files(runner.work_dir) == [".checkpoint_out_dir", "last_checkpoint"]
    # Each pointer names it relative to its own folder when it lies there, else in full.
    assert (out / "last_checkpoint").read_text() == "epoch_3.pth"
    assert (tmp_path / "work" / "last_checkpoint").read_text() == str(out / "epoch_3.pth")
    assert find_latest_checkpoint(str(out)) == str(out / "epoch_3.pth")


def test_out_dir_on_s3(runner, bucket):  # noqa: F811 (the imported fixture)
    hook = CheckpointHook(
        interval=1, out_dir=f"s3://{bucket}/ckpts", max_keep_ckpts=2, save_best="acc"
    )
    train_by_epoch(runner, hook, [dict(acc=0.2), dict(acc=0.1), dict(acc=0.3)])
    out = f"s3://{bucket}/ckpts/work"
    listed = sorted(fileio.list_dir_or_file(out, list_dir=False))
    # Each checkpoint object has its digest beside it (removed with it), see remote_integrity.
    assert listed == [
        "best_acc_epoch_3.pth",
        "best_acc_epoch_3.pth.digest",
        "epoch_2.pth",
        "epoch_2.pth.digest",
        "epoch_3.pth",
        "epoch_3.pth.digest",
        "last_checkpoint",
    ]
    assert fileio.get_text(f"{out}/last_checkpoint") == "epoch_3.pth"
    # A resume finds it from the out_dir's pointer, and the work_dir's names it too.
    assert find_latest_checkpoint(out) == f"{out}/epoch_3.pth"
    # .checkpoint_out_dir: where a resume looks before the first pointer exists.
    assert files(runner.work_dir) == [".checkpoint_out_dir", "last_checkpoint"]
    assert Path(runner.work_dir, "last_checkpoint").read_text() == f"{out}/epoch_3.pth"


# --- argument errors ---


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(interval=1.5), TypeError, r"interval must be an int, got 1\.5"),
        (dict(save_begin=-1), ValueError, r"save_begin must be >= 0, got -1"),
        (dict(filename_tmpl="ckpt.pth"), ValueError, r"filename_tmpl must hold .* 'ckpt\.pth'"),
        (
            dict(save_best=3),
            TypeError,
            r'"save_best" should be a str, a list of str or None, got int: 3',
        ),
        (dict(save_best=dict(acc="acc")), TypeError, r'"save_best" should be a str, .* dict'),
        (dict(save_best=["acc", "acc"]), ValueError, r"save_best names a key twice"),
        (
            dict(save_best=["auto", "acc"]),
            ValueError,
            r"'auto' .* cannot be combined with other keys. Only support one key",
        ),
        (
            dict(save_best=["acc", "mAP"], rule=["greater"] * 3),
            ValueError,
            r'Number of "rule" must be 1 or the number of save_best keys '
            r"\(2: \['acc', 'mAP'\]\), got 3",
        ),
        (
            dict(save_best="acc", rule=1),
            TypeError,
            r'"rule" should be a str, a list of str or None',
        ),
        (dict(published_keys=7), TypeError, r'"published_keys" should be a str'),
        (dict(published_keys=["meta", "meta"]), ValueError, r"published_keys names a key twice"),
        (dict(greater_keys=5, save_best="acc"), TypeError, r"greater_keys must be a str"),
        (
            dict(file_client_args=dict(backend="local"), backend_args=dict(backend="local")),
            ValueError,
            r'"file_client_args" and "backend_args" cannot be set at the same time',
        ),
    ],
)
def test_bad_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        CheckpointHook(**kwargs)


def test_file_client_args_is_deprecated_but_works(runner):
    with captured_log() as log:
        hook = CheckpointHook(interval=1, file_client_args=dict(backend="local"))
    assert any('"file_client_args" will be deprecated' in m for m in log.at(logging.WARNING))
    train_by_epoch(runner, hook, epochs=1)
    assert "epoch_1.pth" in files(runner.work_dir)


def test_a_new_best_between_intervals_writes_no_extra_checkpoint(tmp_path):
    runner = StubRunner(tmp_path, max_epochs=4)
    metrics = [dict(acc=0.1), dict(acc=0.2), dict(acc=0.3), dict(acc=0.0)]
    train_by_epoch(runner, CheckpointHook(interval=2, save_best="acc"), metrics)
    # MMEngine also writes epoch_3.pth here (to record the new best), off the interval.
    assert files(tmp_path) == [
        "best_acc_epoch_3.pth",
        "epoch_2.pth",
        "epoch_4.pth",
        "last_checkpoint",
    ]
    # epoch_4.pth, written after the best of epoch 3, knows it.
    hub = load(tmp_path / "epoch_4.pth")["message_hub"]["runtime_info"]
    assert hub["best_ckpt"] == str(tmp_path / "best_acc_epoch_3.pth")


def test_a_second_training_uses_the_same_out_dir(runner, tmp_path):
    hook = CheckpointHook(interval=1, out_dir=str(tmp_path / "ckpts"))
    hook.before_train(runner)
    hook.before_train(runner)
    # MMEngine appends the work_dir's name again on each call (ckpts/work/work).
    assert hook.out_dir == str(tmp_path / "ckpts" / "work")


def test_out_dir_on_an_fsspec_backend(runner):
    root = f"memory://hooks-b-{os.getpid()}-{id(runner)}"
    hook = CheckpointHook(interval=1, out_dir=root, max_keep_ckpts=1)
    train_by_epoch(runner, hook)
    out = f"{root}/work"
    assert sorted(fileio.list_dir_or_file(out, list_dir=False)) == [
        "epoch_3.pth",
        "epoch_3.pth.digest",
        "last_checkpoint",
    ]
    assert fileio.get_text(f"{out}/last_checkpoint") == "epoch_3.pth"
    assert find_latest_checkpoint(out) == f"{out}/epoch_3.pth"
