"""CheckpointHook through a real Runner on the toy model: the exact files max_keep_ckpts and
save_best leave, by epoch and by iteration, locally and on S3 (moto on loopback), and a resume
that carries the best checkpoint's state on."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from hooks_b_stub_runner import files
from s3_server import bucket, moto_endpoint  # noqa: F401 (fixtures)

from treadle import fileio

runner_module = pytest.importorskip("treadle.runner.runner")
Runner = getattr(runner_module, "Runner", None)
if Runner is None:
    pytest.skip("treadle.runner.runner has no Runner yet", allow_module_level=True)

from runner_toy_model import toy_cfg, toy_iter_cfg  # noqa: E402 (after the guard)


def metric(*accs):
    return dict(type="RunnerToyMetric", values=[dict(acc=a) for a in accs])


def hooks(**checkpoint):
    return dict(
        logger=dict(type="LoggerHook", interval=2),
        checkpoint=dict(type="CheckpointHook", **checkpoint),
    )


def load(path):
    return torch.load(path, weights_only=True)


def test_max_keep_ckpts_and_save_best_by_epoch(tmp_path):
    cfg = toy_cfg(
        tmp_path,
        val_evaluator=metric(0.1, 0.5, 0.3),
        default_hooks=hooks(interval=1, max_keep_ckpts=2, save_best="acc"),
    )
    Runner(**cfg).train()
    assert [f for f in files(tmp_path) if not f.endswith(".py")] == [
        "best_acc_epoch_2.pth",
        "epoch_2.pth",
        "epoch_3.pth",
        "last_checkpoint",
    ]
    assert (tmp_path / "last_checkpoint").read_text() == "epoch_3.pth"  # relative to its folder
    last = load(tmp_path / "epoch_3.pth")
    info = last["message_hub"]["runtime_info"]
    assert info["best_score"] == 0.5
    assert info["best_ckpt"] == str(tmp_path / "best_acc_epoch_2.pth")
    assert info["keep_ckpt_ids"] == [2, 3]
    best = load(tmp_path / "best_acc_epoch_2.pth")
    assert best["meta"]["epoch"] == 2 and "optimizer" not in best


def test_by_iteration(tmp_path):
    cfg = toy_iter_cfg(
        tmp_path,
        val_evaluator=metric(0.4, 0.2),
        default_hooks=hooks(interval=4, by_epoch=False, save_best="acc"),
    )
    Runner(**cfg).train()
    # Saved at 4 and 8, and at the last iteration (10); validation at 5 and 10.
    assert [f for f in files(tmp_path) if not f.endswith(".py")] == [
        "best_acc_iter_5.pth",
        "iter_10.pth",
        "iter_4.pth",
        "iter_8.pth",
        "last_checkpoint",
    ]
    assert load(tmp_path / "iter_8.pth")["meta"]["iter"] == 8


def test_resume_carries_the_best_on(tmp_path):
    cfg = toy_cfg(
        tmp_path,
        val_evaluator=metric(0.5, 0.2, 0.3),
        default_hooks=hooks(interval=1, max_keep_ckpts=1, save_best="acc"),
    )
    Runner(**cfg).train()
    assert "best_acc_epoch_1.pth" in files(tmp_path)
    # Two more epochs, the first of them better: the old best file goes, the kept one too.
    resumed = toy_cfg(
        tmp_path,
        resume=True,
        train_cfg=dict(by_epoch=True, max_epochs=5, val_interval=1),
        val_evaluator=metric(0.7, 0.1),
        default_hooks=hooks(interval=1, max_keep_ckpts=1, save_best="acc"),
    )
    Runner(**resumed).train()
    assert [f for f in files(tmp_path) if f.endswith(".pth")] == [
        "best_acc_epoch_4.pth",
        "epoch_5.pth",
    ]


def test_published_keys(tmp_path):
    cfg = toy_cfg(
        tmp_path,
        train_cfg=dict(by_epoch=True, max_epochs=1, val_interval=1),
        default_hooks=hooks(published_keys=["meta", "state_dict"]),
    )
    Runner(**cfg).train()
    published = [f for f in files(tmp_path) if f.startswith("epoch_1-")]
    assert len(published) == 1
    assert sorted(load(tmp_path / published[0])) == ["meta", "state_dict"]


def test_out_dir_on_s3(tmp_path, bucket):  # noqa: F811 (the imported fixture)
    work_dir = tmp_path / "exp"
    cfg = toy_cfg(
        work_dir,
        val_evaluator=metric(0.3, 0.6, 0.1),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=2, out_dir=f"s3://{bucket}/logs"),
            checkpoint=dict(
                type="CheckpointHook",
                interval=1,
                max_keep_ckpts=1,
                save_best="acc",
                out_dir=f"s3://{bucket}/ckpts",
            ),
        ),
    )
    runner = Runner(**cfg)
    runner.train()
    out = f"s3://{bucket}/ckpts/exp"
    assert sorted(fileio.list_dir_or_file(out, list_dir=False)) == [
        "best_acc_epoch_2.pth",
        "best_acc_epoch_2.pth.digest",
        "epoch_3.pth",
        "epoch_3.pth.digest",
        "last_checkpoint",
    ]
    assert Path(work_dir, "last_checkpoint").read_text() == f"{out}/epoch_3.pth"
    logs = sorted(fileio.list_dir_or_file(f"s3://{bucket}/logs/exp", recursive=True))
    stamp = runner.timestamp
    assert f"{stamp}.log" in logs and os.path.join("vis_data", "scalars.json") in logs
