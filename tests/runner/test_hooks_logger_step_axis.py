"""One step axis for every tracker (issue 20), through a real Runner: train scalars and
validation metrics at the same training iterations in TensorBoard's and W&B's own offline
files, the epoch beside them, scalars.json with MMEngine's steps plus "iter", and `treadle plot`
drawing both on the iteration axis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pytest
from runner_toy_model import toy_cfg, toy_iter_cfg
from visual_tracker_readers import offline_wandb_environment, read_wandb_run

from treadle.runner.cli import main
from treadle.runner.runner import Runner


@pytest.fixture
def offline_wandb(tmp_path, monkeypatch):
    """wandb offline, every file it writes under tmp_path."""
    return offline_wandb_environment(tmp_path, monkeypatch)


def tensorboard_points(vis_data: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar tag of the event files, as TensorBoard's own reader sees it."""
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator"
    )
    reader = event_accumulator.EventAccumulator(str(vis_data), size_guidance={"scalars": 0})
    reader.Reload()
    return {
        tag: [(event.step, event.value) for event in reader.Scalars(tag)]
        for tag in reader.Tags()["scalars"]
    }


def scalars_json(runner) -> list[dict]:
    path = Path(runner.log_dir, "vis_data", "scalars.json")
    return [json.loads(line) for line in path.read_text().splitlines()]


def visualizer(*backends: str) -> dict:
    return dict(type="Visualizer", vis_backends=[dict(type=name) for name in backends])


def logger(**kwargs) -> dict:
    return dict(logger=dict(type="LoggerHook", interval=2, **kwargs))


def steps_of(points):
    return [step for step, _ in points]


@pytest.mark.parametrize("log_metric_by_epoch", [True, False])
def test_epoch_based_run_in_tensorboard_and_scalars_json(tmp_path, log_metric_by_epoch):
    pytest.importorskip("tensorboard")
    # 3 epochs of 4 iterations, a train line every 2, validation after each epoch.
    runner = Runner(
        **toy_cfg(
            tmp_path,
            visualizer=visualizer("LocalVisBackend", "TensorboardVisBackend"),
            default_hooks=logger(log_metric_by_epoch=log_metric_by_epoch),
        )
    )
    runner.train()
    points = tensorboard_points(Path(runner.log_dir, "vis_data"))
    # Whatever log_metric_by_epoch says, the tracker has validation at the iteration it ran
    # after: the step of that iteration's train scalars.
    assert steps_of(points["loss"]) == [2, 4, 6, 8, 10, 12]
    assert steps_of(points["acc"]) == steps_of(points["val/time"]) == [4, 8, 12]
    assert set(steps_of(points["acc"])) <= set(steps_of(points["loss"]))
    # The epoch is a curve of its own on the same axis (train rows and validation rows).
    epochs = [(2, 1), (4, 1), (4, 1), (6, 2), (8, 2), (8, 2), (10, 3), (12, 3), (12, 3)]
    assert points["epoch"] == epochs
    # scalars.json keeps MMEngine's steps, and holds the iteration of every line as "iter".
    val = [line for line in scalars_json(runner) if "acc" in line]
    assert [line["step"] for line in val] == ([1, 2, 3] if log_metric_by_epoch else [4, 8, 12])
    assert [line["iter"] for line in val] == [4, 8, 12]
    train = [line for line in scalars_json(runner) if "loss" in line]
    assert [(line["step"], line["iter"]) for line in train] == [(i, i) for i in range(2, 13, 2)]


def test_epoch_based_run_in_wandb_read_back_from_its_offline_file(tmp_path, offline_wandb):
    runner = Runner(
        **toy_cfg(
            tmp_path / "work", visualizer=visualizer("WandbVisBackend"), default_hooks=logger()
        )
    )
    runner.train()
    run = read_wandb_run(Path(runner.log_dir, "vis_data"))
    # Every row (train and validation) carries the training iteration as its step.
    assert steps_of(run.series("loss")) == [2, 4, 6, 8, 10, 12]
    assert steps_of(run.series("acc")) == [4, 8, 12]
    # The validation row after epoch e holds epoch e, like the train rows of that epoch.
    assert [(row["step"], row["epoch"]) for row in run.history if "acc" in row] == [
        (4, 1),
        (8, 2),
        (12, 3),
    ]
    assert [row["epoch"] for row in run.history if "loss" in row] == [1, 1, 2, 2, 3, 3]
    # W&B's step-metric mechanism: every metric, the epoch included, is plotted against step.
    step_metrics = {metric.glob_name or metric.name: metric.step_metric for metric in run.metrics}
    assert step_metrics["*"] == "step" and step_metrics["epoch"] == "step"
    # W&B's own row counter grows by one per row: no row was dropped.
    assert [row["_step"] for row in run.history] == list(range(9))


def test_iteration_based_run_has_no_epoch_curve(tmp_path):
    pytest.importorskip("tensorboard")
    # 10 iterations, validation every 5; the toy config logs every iteration.
    runner = Runner(
        **toy_iter_cfg(tmp_path, visualizer=visualizer("LocalVisBackend", "TensorboardVisBackend"))
    )
    runner.train()
    points = tensorboard_points(Path(runner.log_dir, "vis_data"))
    assert steps_of(points["loss"]) == list(range(1, 11))
    assert steps_of(points["acc"]) == [5, 10]
    assert "epoch" not in points  # one epoch for the hooks: not worth a flat curve
    val = [line for line in scalars_json(runner) if "acc" in line]
    assert [line["iter"] for line in val] == [5, 10]


def test_validation_alone_is_at_iteration_zero(tmp_path):
    pytest.importorskip("tensorboard")
    runner = Runner(
        **toy_cfg(
            tmp_path,
            visualizer=visualizer("LocalVisBackend", "TensorboardVisBackend"),
            param_scheduler=None,
        )
    )
    runner.val()
    runner.visualizer.close()
    points = tensorboard_points(Path(runner.log_dir, "vis_data"))
    assert steps_of(points["acc"]) == [0]
    (line,) = scalars_json(runner)
    assert (line["step"], line["iter"]) == (0, 0)


def test_treadle_plot_draws_train_and_validation_on_the_iteration_axis(tmp_path, capsys):
    from treadle.visual import plot_scalars

    runner = Runner(**toy_cfg(tmp_path, default_hooks=logger()))
    runner.train()
    figure = plot_scalars(tmp_path)
    by_title = {axes.get_title(): axes for axes in figure.axes}
    assert all(axes.get_xlabel() == "iteration" for axes in figure.axes)
    assert list(by_title["acc"].lines[0].get_xdata()) == [4, 8, 12]
    assert list(by_title["loss"].lines[0].get_xdata()) == [2, 4, 6, 8, 10, 12]
    # Train time and validation time share a panel.
    assert [line.get_label() for line in by_title["time"].lines] == ["time", "val/time"]

    assert main(["plot", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "panels (" in out and "time + val/time" in out
    assert Path(runner.log_dir, "vis_data", "curves.png").is_file()


def test_a_visualizer_with_mmengines_fixed_signature_gets_mmengines_call(tmp_path):
    from treadle.visual import Visualizer

    class FixedSignature(Visualizer):
        """A downstream override written against MMEngine's add_scalars, without **kwargs."""

        calls: ClassVar[list] = []

        def add_scalars(self, scalar_dict, step=0, file_path=None):
            self.calls.append((sorted(scalar_dict), step))

    vis = FixedSignature(name=f"fixed-{tmp_path.name}")
    runner = Runner(**toy_cfg(tmp_path, visualizer=vis, default_hooks=logger()))
    runner.train()
    val_steps = [step for keys, step in FixedSignature.calls if "acc" in keys]
    assert val_steps == [1, 2, 3]  # log_metric_by_epoch: the epoch, as MMEngine's LoggerHook
