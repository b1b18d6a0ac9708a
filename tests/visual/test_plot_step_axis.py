"""`treadle plot` / plot_scalars on the iteration axis: validation results a runner logs by
epoch, with their iteration as "iter", line up with the training curves (issue 20)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from treadle.visual import LocalVisBackend, Visualizer, plot_scalars, read_scalars
from treadle.visual.plot import plot_file
from treadle.visual.plot_panels import metric_name, panel_groups
from treadle.visual.scalars_file import ScalarSeries


def log_run(save_dir, epochs=3, epoch_length=20):
    """What LoggerHook now writes through a Visualizer: train lines at the iteration, validation
    lines at the epoch (log_metric_by_epoch=True) with the iteration given as global_step."""
    vis = Visualizer(
        name=f"plot-axis-{save_dir.name}",
        vis_backends=[dict(type="LocalVisBackend")],
        save_dir=str(save_dir),
    )
    for it in range(1, epochs * epoch_length + 1):
        epoch = (it - 1) // epoch_length + 1
        tag = {"lr": 0.1, "loss": 2.0 / it**0.5, "epoch": epoch, "iter": it}
        vis.add_scalars(tag, step=it, global_step=it, epoch=epoch)
        if it % epoch_length == 0:
            vis.add_scalars(
                {"acc": 50.0 + epoch, "val/loss": 1.0 / epoch},
                step=epoch,
                global_step=it,
                epoch=epoch,
            )
    vis.close()
    return save_dir / "vis_data" / "scalars.json"


def test_validation_values_are_read_at_their_iteration(tmp_path):
    series = read_scalars(log_run(tmp_path))
    assert series["acc"].steps == [1, 2, 3]  # the file keeps MMEngine's step (the epoch)
    assert series["acc"].iteration_axis() == [20, 40, 60]
    assert series["loss"].iteration_axis() == list(range(1, 61))
    assert series["acc"].has_iterations and series["loss"].has_iterations


def test_train_and_validation_share_the_iteration_axis_and_a_panel(tmp_path):
    figure = plot_scalars(log_run(tmp_path))
    assert [axes.get_title() for axes in figure.axes] == ["lr", "loss", "acc"]
    assert all(axes.get_xlabel() == "iteration" for axes in figure.axes)
    loss_axes = figure.axes[1]
    train, val = loss_axes.lines
    assert (train.get_label(), val.get_label()) == ("loss", "val/loss")
    assert list(val.get_xdata()) == [20, 40, 60]
    assert [text.get_text() for text in loss_axes.get_legend().get_texts()] == ["loss", "val/loss"]
    assert list(figure.axes[2].lines[0].get_xdata()) == [20, 40, 60]
    # Every panel spans the same iterations, so iteration 40 is at one place in each.
    assert len({axes.get_xlim() for axes in figure.axes}) == 1
    low, high = figure.axes[0].get_xlim()
    assert low < 1 and 60 < high < 62


def test_a_file_without_iter_keeps_the_step_axis(tmp_path):
    backend = LocalVisBackend(str(tmp_path))
    for step in (1, 2, 3):
        backend.add_scalars({"loss": 1.0 / step}, step=step)
    backend.close()
    figure = plot_scalars(tmp_path / "scalars.json")
    assert figure.axes[0].get_xlabel() == "step"
    assert list(figure.axes[0].lines[0].get_xdata()) == [1, 2, 3]


def test_series_built_by_hand_are_drawn_at_their_steps():
    series = {"loss": ScalarSeries([1, 2], [0.5, 0.25]), "val/loss": ScalarSeries([2], [0.4])}
    figure = plot_scalars(series)
    assert len(figure.axes) == 1 and figure.axes[0].get_xlabel() == "step"
    assert [list(line.get_xdata()) for line in figure.axes[0].lines] == [[1, 2], [2]]


def test_a_single_point_keeps_matplotlibs_own_range():
    figure = plot_scalars({"loss": ScalarSeries([5], [0.5])})
    low, high = figure.axes[0].get_xlim()
    assert low < 5 < high


def test_panel_groups_and_metric_names():
    assert metric_name("train/loss") == "loss"
    assert metric_name("val/") == "val/"  # a bare prefix names nothing: kept as it is
    assert metric_name("accuracy/top1") == "accuracy/top1"
    assert panel_groups(["train/loss", "lr", "val/loss", "test/loss", "val/acc"]) == [
        ("loss", ["train/loss", "val/loss", "test/loss"]),
        ("lr", ["lr"]),
        ("val/acc", ["val/acc"]),
    ]


def test_plot_file_reports_its_panels(tmp_path):
    path = log_run(tmp_path)
    result = plot_file(path, keys=["loss", "val/loss", "acc"])
    assert result.keys == ["loss", "val/loss", "acc"]
    assert result.panels == [["loss", "val/loss"], ["acc"]]
    assert result.panel_summary() == "2 panels (loss + val/loss, acc)"
    assert result.out == path.parent / "curves.png"


def test_the_module_command_prints_the_panels(tmp_path):
    path = log_run(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "treadle.visual", "plot", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "3 panels (lr, loss + val/loss, acc)" in done.stdout


def test_scalars_json_lines_hold_step_and_iter(tmp_path):
    lines = [json.loads(line) for line in log_run(tmp_path, epochs=1).read_text().splitlines()]
    assert lines[-1] == {"acc": 51.0, "val/loss": 1.0, "step": 1, "iter": 20}


@pytest.mark.parametrize("keys", [["loss"], ["val/loss"]])
def test_one_key_alone_is_its_own_panel(tmp_path, keys):
    figure = plot_scalars(log_run(tmp_path), keys=keys)
    assert [axes.get_title() for axes in figure.axes] == keys
    assert figure.axes[0].get_legend() is None
