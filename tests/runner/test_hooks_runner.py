"""The hooks of part hooks-a through a real Runner training the toy model of
runner_toy_model: the default hooks' message hub, early stopping, EMA saved and resumed,
the profiler's trace, and the other hooks running along."""

from __future__ import annotations

import json

import pytest
import torch

pytest.importorskip("treadle.runner.runner.runner")

from runner_toy_model import toy_cfg, toy_iter_cfg

from treadle.runner.runner import Runner


def hook_names(runner):
    return [type(hook).__name__ for hook in runner.hooks]


def test_default_hooks_fill_the_message_hub(tmp_path):
    runner = Runner(**toy_cfg(tmp_path))
    runner.train()
    names = hook_names(runner)
    for name in ("RuntimeInfoHook", "IterTimerHook", "DistSamplerSeedHook", "ParamSchedulerHook"):
        assert name in names
    assert names.index("RuntimeInfoHook") < names.index("IterTimerHook")
    assert names.index("IterTimerHook") < names.index("ParamSchedulerHook")
    hub = runner.message_hub
    for key in ("train/lr", "train/loss", "train/time", "train/data_time", "val/time", "val/mse"):
        assert key in hub.log_scalars, key
    # 3 epochs of 4 iterations; val/time counts validation iterations only.
    assert len(hub.get_scalar("train/time").data[0]) == 12
    assert len(hub.get_scalar("val/time").data[0]) == 12
    assert hub.get_info("max_epochs") == 3 and hub.get_info("max_iters") == 12
    assert hub.get_info("dataset_meta") == {"classes": ("toy",)}
    # MultiStepLR at epochs 1 and 2 (by epoch, stepped by ParamSchedulerHook).
    assert hub.get_scalar("train/lr").data[0][::4] == pytest.approx([1e-2, 1e-3, 1e-4])
    assert runner.train_loop.dataloader.sampler.epoch == 2


def test_iteration_schedulers_step_every_iteration(tmp_path):
    runner = Runner(**toy_iter_cfg(tmp_path))
    runner.train()
    lrs = runner.message_hub.get_scalar("train/lr").data[0]
    assert lrs == pytest.approx([1e-2] * 4 + [1e-3] * 4 + [1e-4] * 2)


def test_early_stopping_ends_training(tmp_path):
    cfg = toy_cfg(
        tmp_path,
        train_cfg=dict(by_epoch=True, max_epochs=6, val_interval=1),
        val_evaluator=dict(type="RunnerToyMetric", values=[dict(acc=0.5), dict(acc=0.4)]),
        custom_hooks=[dict(type="EarlyStoppingHook", monitor="acc", patience=2)],
    )
    runner = Runner(**cfg)
    runner.train()
    assert runner.epoch == 3  # validations 1, 2, 3: two without improvement
    assert runner.train_loop.stop_training


def test_ema_is_saved_and_resumed(tmp_path):
    hooks = [dict(type="EMAHook", momentum=0.5)]
    runner = Runner(**toy_cfg(tmp_path, custom_hooks=hooks))
    runner.train()
    ema = runner.hooks[[type(h).__name__ for h in runner.hooks].index("EMAHook")]
    checkpoint = torch.load(tmp_path / "epoch_3.pth", weights_only=True)
    trained = {f"module.{k}": v for k, v in runner.model.state_dict().items()}
    averaged = ema.ema_model.state_dict()
    for key, value in checkpoint["ema_state_dict"].items():
        if key.startswith("module.") and key in trained:
            torch.testing.assert_close(value, trained[key])
            torch.testing.assert_close(checkpoint["state_dict"][key[7:]], averaged[key])

    # Resumed from epoch 2, the third epoch gives the same average.
    again = tmp_path / "again"
    again.mkdir()
    (again / "epoch_2.pth").write_bytes((tmp_path / "epoch_2.pth").read_bytes())
    resumed = Runner(**toy_cfg(again, custom_hooks=hooks, resume=True))
    resumed.train()
    resumed_ema = resumed.hooks[hook_names(resumed).index("EMAHook")]
    for key, value in resumed_ema.ema_model.state_dict().items():
        torch.testing.assert_close(value, averaged[key])


def test_profiler_writes_a_chrome_trace(tmp_path):
    trace = tmp_path / "trace.json"
    hooks = [dict(type="ProfilerHook", by_epoch=False, profile_times=2, json_trace_path=str(trace))]
    Runner(**toy_cfg(tmp_path, custom_hooks=hooks)).train()
    assert "traceEvents" in json.loads(trace.read_text())


def test_the_other_hooks_run_along(tmp_path):
    hooks = [
        dict(type="EmptyCacheHook", before_epoch=True, after_iter=True),
        dict(type="SyncBuffersHook"),
        dict(type="NaiveVisualizationHook"),
    ]
    runner = Runner(
        **toy_cfg(tmp_path, model=dict(type="RunnerToyModel", with_bn=True), custom_hooks=hooks)
    )
    runner.train()
    assert {"EmptyCacheHook", "SyncBuffersHook", "NaiveVisualizationHook"} <= set(
        hook_names(runner)
    )
