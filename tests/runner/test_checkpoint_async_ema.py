"""EMAHook's averaged weights go through an asynchronous save's background copy, as the model's
do: they are not copied on the training step, and EMAHook waits for the copy before it changes
them (its update after the next iteration, also when gradient accumulation leaves that
iteration without an optimizer step), so the files equal those of synchronous saves."""

from __future__ import annotations

import time

import torch

from treadle.runner.checkpoint import async_writer
from treadle.runner.hooks import EMAHook


def _cfg(work_dir, async_save, accumulative_counts=1):
    from runner_toy_model import toy_cfg

    cfg = toy_cfg(
        work_dir,
        train_cfg=dict(by_epoch=False, max_iters=8, val_interval=100),
        param_scheduler=None,
        default_hooks=dict(
            checkpoint=dict(
                type="CheckpointHook", interval=2, by_epoch=False, async_save=async_save
            )
        ),
        log_level="WARNING",
    )
    cfg["custom_hooks"] = [dict(type="EMAHook", momentum=0.5)]
    cfg["optim_wrapper"] = dict(cfg["optim_wrapper"], accumulative_counts=accumulative_counts)
    return cfg


def _late_copies(monkeypatch, seen):
    """Every tensor through the background copy, which starts late: after the next iteration's
    hooks unless something waits for it."""
    monkeypatch.setattr(async_writer, "_BACKGROUND_BYTES", 0)
    copy_all = async_writer._copy_all

    def late(copies, ready):
        seen.update(source.untyped_storage().data_ptr() for source, _ in copies)
        time.sleep(0.3)
        copy_all(copies, ready)

    monkeypatch.setattr(async_writer, "_copy_all", late)


def test_the_averaged_weights_are_copied_in_the_background(tmp_path, monkeypatch):
    from treadle.runner.runner import Runner

    seen: set[int] = set()
    _late_copies(monkeypatch, seen)
    runner = Runner(**_cfg(tmp_path, async_save=True))
    runner.train()
    ema = next(hook for hook in runner.hooks if isinstance(hook, EMAHook))
    averaged = {p.untyped_storage().data_ptr() for p in ema.ema_model.module.parameters()}
    assert averaged <= seen


def test_async_saves_with_ema_equal_synchronous_ones_under_gradient_accumulation(
    tmp_path, monkeypatch
):
    from treadle.runner.runner import Runner

    _late_copies(monkeypatch, set())
    for mode in (False, True):
        Runner(**_cfg(tmp_path / str(mode), async_save=mode, accumulative_counts=2)).train()
    for name in ("iter_2.pth", "iter_4.pth", "iter_6.pth", "iter_8.pth"):
        sync = torch.load(tmp_path / "False" / name, weights_only=False)
        asyn = torch.load(tmp_path / "True" / name, weights_only=False)
        for part in ("state_dict", "ema_state_dict"):
            assert asyn[part].keys() == sync[part].keys()
            for key, value in sync[part].items():
                assert torch.equal(asyn[part][key], value), (name, part, key)
