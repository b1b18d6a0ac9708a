"""``val_cfg=dict(compute_loss=True)`` through a real Runner: the mean of each loss term over
the whole validation set, reported as ``val/loss`` and ``val/<term>`` in the metrics, the log
line, scalars.json and every visual backend, and used by save_best and early stopping."""

from __future__ import annotations

import glob
import json
import os

import pytest
import torch
from runner_toy_model import ToyDataset, ToyModel, stacked, toy_cfg, toy_iter_cfg
from runner_toys import captured_log
from valloss_toys import RecordingVisBackend, val_loader, whole_set_mse

from treadle.runner.hooks import Hook
from treadle.runner.loops.eval_loss_mean import EvalLossMean
from treadle.runner.model import unwrap_model
from treadle.runner.registry import HOOKS
from treadle.runner.runner import Runner
from treadle.runner.structures import BaseDataElement


def val_cfg(tmp_path, **overrides):
    """A toy run validating 7 samples in batches of 2 (the last batch holds one)."""
    overrides.setdefault("val_cfg", dict(compute_loss=True))
    overrides.setdefault("val_dataloader", val_loader(length=7, batch_size=2))
    # runner.val() before train() leaves the scheduler configs unbuilt (ParamSchedulerHook's
    # after_val_epoch refuses them): these tests need no scheduler.
    overrides.setdefault("param_scheduler", None)
    return toy_cfg(tmp_path, **overrides)


def test_val_loss_is_the_mean_over_every_sample(tmp_path):
    runner = Runner(**val_cfg(tmp_path))
    metrics = runner.val()
    model = unwrap_model(runner.model)
    assert metrics["val/loss"] == pytest.approx(whole_set_mse(model), abs=1e-6)
    # A mean of the batch means weights the short last batch too much: the two differ.
    dataset = ToyDataset(length=7)
    with torch.no_grad():
        errors = (model.head(dataset.inputs) - dataset.targets) ** 2
    batch_means = [float(errors[i : i + 2].mean()) for i in range(0, 7, 2)]
    assert abs(sum(batch_means) / 4 - metrics["val/loss"]) > 1e-3
    # The evaluator's own metrics are still there.
    assert {"mse", "acc"} <= set(metrics)


def test_terms_are_those_parse_losses_logs(tmp_path):
    runner = Runner(**val_cfg(tmp_path, model=dict(type="ValLossMultiTermModel")))
    metrics = runner.val()
    losses = [key for key in metrics if key.startswith("val/")]
    assert losses == ["val/loss", "val/loss_a", "val/loss_b", "val/acc"]
    assert metrics["val/loss_a"] == pytest.approx(whole_set_mse(unwrap_model(runner.model)))
    assert metrics["val/loss_b"] == pytest.approx(0.75 * metrics["val/loss_a"])
    assert metrics["val/loss"] == pytest.approx(metrics["val/loss_a"] + metrics["val/loss_b"])
    assert 0.0 <= metrics["val/acc"] <= 1.0


def test_test_loop_reports_test_loss(tmp_path):
    cfg = val_cfg(
        tmp_path, test_cfg=dict(compute_loss=True), test_dataloader=val_loader(7, batch_size=3)
    )
    runner = Runner(**cfg)
    metrics = runner.test()
    assert metrics["test/loss"] == pytest.approx(whole_set_mse(unwrap_model(runner.model)), 1e-6)
    assert "val/loss" not in metrics


def test_val_loss_reaches_the_log_line_scalars_json_and_every_backend(tmp_path):
    pytest.importorskip("tensorboard")
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    RecordingVisBackend.scalars.clear()
    visualizer = dict(
        type="Visualizer",
        vis_backends=[
            dict(type="LocalVisBackend"),
            dict(type="ValLossRecordingVisBackend"),
            dict(type="TensorboardVisBackend"),
        ],
    )
    runner = Runner(**val_cfg(tmp_path, visualizer=visualizer))
    with captured_log() as log:
        runner.train()
    # The epoch lines only: the iteration lines of a validation never show val/loss (its
    # history holds the earlier validations' values only).
    val_lines = [m for m in log.messages if "Epoch(val)" in m and "val/loss: " in m]
    assert len(val_lines) == 3  # one per validation, beside the metrics
    assert all("mse: " in line for line in val_lines)

    (scalars_path,) = glob.glob(os.path.join(runner.log_dir, "**", "scalars.json"), recursive=True)
    with open(scalars_path) as file:
        entries = [json.loads(line) for line in file]
    logged = [entry["val/loss"] for entry in entries if "val/loss" in entry]
    assert len(logged) == 3
    recorded = [s["val/loss"] for s in RecordingVisBackend.scalars if "val/loss" in s]
    assert recorded == pytest.approx(logged)
    assert logged[-1] == pytest.approx(runner.message_hub.get_scalar("val/val/loss").current())

    (events,) = glob.glob(
        os.path.join(runner.log_dir, "**", "events.out.tfevents.*"), recursive=True
    )
    reader = accumulator.EventAccumulator(os.path.dirname(events), size_guidance={"scalars": 0})
    reader.Reload()
    assert [event.value for event in reader.Scalars("val/loss")] == pytest.approx(logged)


def test_save_best_on_val_loss_keeps_the_lowest(tmp_path):
    default_hooks = dict(
        logger=dict(type="LoggerHook", interval=1),
        checkpoint=dict(type="CheckpointHook", interval=1, save_best="val/loss"),
    )
    cfg = val_cfg(
        tmp_path,
        model=dict(type="ValLossScriptedModel", val_losses=[3.0, 1.0, 2.0]),
        default_hooks=default_hooks,
    )
    runner = Runner(**cfg)
    runner.train()
    best = sorted(name for name in os.listdir(tmp_path) if name.startswith("best_"))
    assert best == ["best_val_loss_epoch_2.pth"]  # 'less' inferred: 1.0 at epoch 2


def test_iteration_based_training_keeps_the_best_val_loss_by_iteration(tmp_path):
    cfg = toy_iter_cfg(
        tmp_path,
        model=dict(type="ValLossScriptedModel", val_losses=[2.0, 1.0, 3.0], iters_per_epoch=4),
        train_cfg=dict(by_epoch=False, max_iters=12, val_interval=4),
        val_cfg=dict(compute_loss=True),
        val_dataloader=val_loader(length=7, batch_size=2),
        default_hooks=dict(
            checkpoint=dict(type="CheckpointHook", interval=4, by_epoch=False, save_best="val/loss")
        ),
    )
    runner = Runner(**cfg)
    runner.train()
    best = sorted(name for name in os.listdir(tmp_path) if name.startswith("best_"))
    assert best == ["best_val_loss_iter_8.pth"]


def test_early_stopping_monitors_val_loss(tmp_path):
    cfg = val_cfg(
        tmp_path,
        model=dict(type="ValLossScriptedModel", val_losses=[3.0, 2.0, 2.5, 2.6, 1.0]),
        train_cfg=dict(by_epoch=True, max_epochs=5, val_interval=1),
        custom_hooks=[dict(type="EarlyStoppingHook", monitor="val/loss", patience=2)],
    )
    runner = Runner(**cfg)
    runner.train()
    assert runner.epoch == 4  # two validations without improvement after epoch 2


def test_one_preprocessing_per_batch_and_no_gradients(tmp_path):
    runner = Runner(**val_cfg(tmp_path))
    model = unwrap_model(runner.model)
    preprocessed, forwards = [], []
    model.data_preprocessor.register_forward_hook(lambda *args: preprocessed.append(1))
    model.head.register_forward_hook(
        lambda module, args, output: forwards.append((torch.is_grad_enabled(), module.training))
    )
    runner.val()
    assert len(preprocessed) == 4  # 4 batches: one preprocessing each
    assert forwards == [(False, False)] * 8  # predict and loss per batch, eval mode, no grad


def test_fp16_runs_the_loss_forward_under_autocast(tmp_path):
    runner = Runner(**val_cfg(tmp_path, val_cfg=dict(compute_loss=True, fp16=True)))
    dtypes = []
    unwrap_model(runner.model).head.linear1.register_forward_hook(
        lambda module, args, output: dtypes.append(output.dtype)
    )
    runner.val()
    assert dtypes == [torch.bfloat16] * 8  # autocast's dtype on the CPU, both forwards


class OwnStepModel(ToyModel):
    """Writes its own val_step, which ends its outputs with an MMEngine-style loss element."""

    def __init__(self) -> None:
        super().__init__()
        self.own_steps = 0

    def val_step(self, data):
        self.own_steps += 1
        data = self.data_preprocessor(data, False)
        predictions = self(**data, mode="predict")
        outputs = self.head(stacked(data["inputs"]))
        loss = ((outputs - stacked(data["data_samples"])) ** 2).mean()
        return [*predictions, BaseDataElement(loss=dict(loss_own=loss))]


def test_a_model_with_its_own_val_step_keeps_it_and_its_loss_element(tmp_path):
    runner = Runner(**val_cfg(tmp_path, model=OwnStepModel()))
    metrics = runner.val()
    assert runner.model.own_steps == 4
    # The trailing loss element (mean of the batch means, MMEngine's way) is still reported.
    assert {"loss_own", "val_loss"} <= set(metrics)
    assert metrics["val/loss"] == pytest.approx(whole_set_mse(runner.model), abs=1e-6)
    assert metrics["mse"] == pytest.approx(metrics["val/loss"], abs=1e-5)


def test_without_compute_loss_nothing_changes(tmp_path):
    metrics = Runner(**val_cfg(tmp_path, val_cfg=dict())).val()
    assert set(metrics) == {"mse", "acc"}


def test_the_sums_stay_on_the_device_until_the_summary(monkeypatch):
    mean = EvalLossMean("val")
    syncs = []
    for name in ("item", "tolist", "__float__"):
        original = getattr(torch.Tensor, name)

        def counting(self, *args, _original=original, _name=name):
            syncs.append(_name)
            return _original(self, *args)

        monkeypatch.setattr(torch.Tensor, name, counting)
    for value, count in ((1.0, 2), (4.0, 1), (2.5, 2)):
        mean.add({"loss": torch.tensor(value), "loss_x": torch.tensor(value * 2)}, count)
    assert syncs == []
    summary = mean.summary()
    assert syncs == ["tolist"]
    assert summary == pytest.approx({"val/loss": 2.2, "val/loss_x": 4.4})
    mean.clear()
    assert mean.summary() == {}


def test_each_validation_logs_its_own_loss_with_the_default_window(tmp_path):
    cfg = val_cfg(
        tmp_path,
        model=dict(type="ValLossScriptedModel", val_losses=[3.0, 1.0, 2.0]),
        log_processor=dict(),  # window_size=10
    )
    runner = Runner(**cfg)
    with captured_log() as log:
        runner.train()
    lines = [m for m in log.messages if "Epoch(val)" in m and "val/loss: " in m]
    assert all("mse: " in line for line in lines)  # the epoch lines only
    logged = [float(line.split("val/loss: ")[1].split()[0]) for line in lines]
    assert logged == [3.0, 1.0, 2.0]


@HOOKS.register_module()
class ValLossUserScalarHook(Hook):
    """Logs a scalar of its own at every validation iteration, named so that MMEngine's rule
    shows it in the val iteration lines (a stripped name starting with 'val/loss')."""

    def after_val_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        runner.message_hub.update_scalar("val/val/loss_user", float(batch_idx + 1))


def test_iteration_lines_of_later_validations_show_no_stale_val_loss(tmp_path):
    # Three validations of 4 batches each, a line per iteration; the 2nd and 3rd validations'
    # iteration lines would otherwise show the mean of the earlier validations' val/loss.
    cfg = val_cfg(
        tmp_path,
        model=dict(type="ValLossScriptedModel", val_losses=[3.0, 1.0, 2.0]),
        custom_hooks=[dict(type="ValLossUserScalarHook")],
    )
    runner = Runner(**cfg)
    with captured_log() as log:
        runner.train()
    iteration_lines = [
        m for m in log.messages if "Epoch(val)" in m and "mse: " not in m and "/4]" in m
    ]
    assert len(iteration_lines) == 12
    assert not [line for line in iteration_lines if "val/loss: " in line]
    # MMEngine's rule stays for scalars logged during the pass: the running value shows.
    assert [line.split("val/loss_user: ")[1] for line in iteration_lines[:4]] == [
        "1.0000",
        "2.0000",
        "3.0000",
        "4.0000",
    ]
    assert runner.val_loop.loss_metric_names == {"val/loss"}
