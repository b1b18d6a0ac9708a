"""The plot command: one panel per key, from the figure and from the written PNG."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from treadle.visual.backends import LocalVisBackend
from treadle.visual.plot import default_keys, plot_file, plot_scalars
from treadle.visual.scalars_file import find_scalars_file, read_scalars

TRAIN_KEYS = ["lr", "loss", "data_time"]
VAL_KEY = "acc/top1"


def log_run(run_dir, iterations=60, epoch_length=20):
    """What a runner's logger hook writes: training lines every iteration (with epoch and iter
    counters), validation metrics once per epoch at the epoch as step (MMEngine's habit)."""
    backend = LocalVisBackend(str(run_dir / "vis_data"))
    for it in range(1, iterations + 1):
        epoch = (it - 1) // epoch_length + 1
        scalars = {"lr": 0.1 / it, "loss": 2.0 / it**0.5, "data_time": 0.01, "epoch": epoch}
        backend.add_scalars({**scalars, "iter": it}, step=it)
        if it % epoch_length == 0:
            backend.add_scalars({VAL_KEY: 50.0 + epoch}, step=epoch)
    backend.close()
    return run_dir / "vis_data" / "scalars.json"


@pytest.fixture
def work_dir(tmp_path):
    log_run(tmp_path / "work" / "20240101_000000")
    return tmp_path / "work"


def dark_horizontal_edges(png: np.ndarray, min_length: int) -> list[tuple[int, int, int]]:
    """(row, start, end) of the long dark horizontal lines of an RGB image: the top and bottom
    frames of the panels (curves are coloured, grids light grey, text lines short). A line
    drawn across two rows by anti-aliasing counts once."""
    dark = (png[:, :, :3] < 160).all(axis=2)
    edges: list[tuple[int, int, int]] = []
    for row in range(dark.shape[0]):
        padded = np.concatenate([[0], dark[row].astype(np.int8), [0]])
        changes = np.diff(padded)
        for start, end in zip(
            np.flatnonzero(changes == 1), np.flatnonzero(changes == -1), strict=True
        ):
            if end - start < min_length:
                continue
            same_line = [
                edge
                for edge in edges
                if edge[0] == row - 1 and abs(edge[1] - start) <= 2 and abs(edge[2] - end) <= 2
            ]
            if same_line:
                edges.remove(same_line[0])
            edges.append((row, int(start), int(end)))
    return edges


def render(figure) -> np.ndarray:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=figure.dpi)
    buffer.seek(0)
    with Image.open(buffer) as image:
        return np.asarray(image.convert("RGB"))


def test_default_keys_leave_out_the_counters(work_dir):
    series = read_scalars(find_scalars_file(work_dir).path)
    assert set(series) == {*TRAIN_KEYS, VAL_KEY, "epoch", "iter", "step"}
    assert default_keys(series) == [*TRAIN_KEYS, VAL_KEY]


def test_counters_are_recognised_as_the_last_part_of_a_key(tmp_path):
    path = tmp_path / "scalars.json"
    path.write_text('{"train/epoch": 1, "Global_Step": 4, "train/loss": 0.5, "step": 4}\n')
    assert default_keys(read_scalars(path)) == ["train/loss"]


def test_figure_has_one_panel_per_key_titled_with_it(work_dir):
    figure = plot_scalars(work_dir)
    assert [axes.get_title() for axes in figure.axes] == [*TRAIN_KEYS, VAL_KEY]
    # issue 20: the training lines hold "iter", so the axis is the iteration; these MMEngine
    # validation lines have none and stay at their step (test_plot_step_axis.py: with "iter").
    assert all(axes.get_xlabel() == "iteration" for axes in figure.axes)
    # Keys logged in some lines only are drawn at their own steps.
    loss_line, val_line = figure.axes[1].lines[0], figure.axes[3].lines[0]
    assert list(loss_line.get_xdata()) == list(range(1, 61))
    assert list(val_line.get_xdata()) == [1, 2, 3]
    assert list(val_line.get_ydata()) == [51.0, 52.0, 53.0]
    assert figure.get_suptitle().endswith(os.path.join("vis_data", "scalars.json"))


def test_keys_choose_and_order_the_panels(work_dir):
    figure = plot_scalars(work_dir, keys=["loss", "epoch"])
    assert [axes.get_title() for axes in figure.axes] == ["loss", "epoch"]


def test_the_rendered_figure_shows_the_panel_frames_where_the_axes_are(work_dir):
    figure = plot_scalars(work_dir)
    pixels = render(figure)
    assert pixels.shape[:2] == tuple(
        round(size * figure.dpi) for size in reversed(figure.get_size_inches())
    )
    edges = dark_horizontal_edges(pixels, min_length=200)
    height = pixels.shape[0]
    for axes in figure.axes:  # each panel's top and bottom frame lines are in the image
        box = axes.get_window_extent()
        for y in (height - box.y1, height - box.y0):
            assert any(
                abs(row - y) <= 2 and abs(start - box.x0) <= 2 and abs(end - box.x1) <= 2
                for row, start, end in edges
            ), (axes.get_title(), y)
    assert len(edges) == 2 * len(figure.axes)


def test_plot_file_writes_a_png_with_the_panels(work_dir, tmp_path):
    result = plot_file(work_dir, keys=["loss", "lr"], out=tmp_path / "out" / "curves.png")
    assert result.out == tmp_path / "out" / "curves.png"
    assert result.keys == ["loss", "lr"]
    with Image.open(result.out) as image:
        assert image.format == "PNG"
        expected = plot_scalars(work_dir, keys=["loss", "lr"])
        width, height = (round(size * expected.dpi) for size in expected.get_size_inches())
        assert image.size == (width, height)
        pixels = np.asarray(image.convert("RGB"))
    edges = dark_horizontal_edges(pixels, min_length=200)
    assert len(edges) == 4  # two panels, side by side: two frames of two lines each
    assert len({start for _, start, _ in edges}) == 2


def test_default_out_is_curves_png_next_to_the_scalars(work_dir):
    result = plot_file(work_dir)
    assert result.out == result.scalars.path.parent / "curves.png"
    assert result.out.is_file()


def test_many_keys_wrap_into_rows_of_three(tmp_path):
    path = tmp_path / "scalars.json"
    path.write_text(json.dumps({f"k{index}": index for index in range(7)} | {"step": 1}) + "\n")
    figure = plot_scalars(path)
    assert len(figure.axes) == 7
    columns = {round(axes.get_position().x0, 3) for axes in figure.axes}
    rows = {round(axes.get_position().y0, 3) for axes in figure.axes}
    assert (len(columns), len(rows)) == (3, 3)


def test_the_newest_run_of_a_work_dir_is_used(tmp_path):
    old = log_run(tmp_path / "work" / "20240101_000000")
    new = log_run(tmp_path / "work" / "20240202_000000", iterations=20)
    os.utime(old, (1_000_000_000, 1_000_000_000))
    found = find_scalars_file(tmp_path / "work")
    assert found.path == new
    assert "newest of 2" in found.reason
    os.utime(new, (900_000_000, 900_000_000))
    assert find_scalars_file(tmp_path / "work").path == old


def test_a_vis_data_dir_or_the_file_itself_is_accepted(work_dir):
    path = work_dir / "20240101_000000" / "vis_data" / "scalars.json"
    assert find_scalars_file(path).path == path
    assert find_scalars_file(path.parent).path == path
    assert find_scalars_file(path.parent.parent).path == path


def test_missing_path_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"no such file or directory: .*missing"):
        plot_scalars(tmp_path / "missing")


def test_a_work_dir_without_scalars_is_named(tmp_path):
    (tmp_path / "empty_run" / "vis_data").mkdir(parents=True)
    with pytest.raises(FileNotFoundError, match=r"no scalars\.json under .*empty_run"):
        plot_scalars(tmp_path / "empty_run")


def test_unknown_key_names_the_available_and_the_closest(work_dir):
    with pytest.raises(
        ValueError,
        match=r"unknown key 'los' .*available keys: lr, loss, .*"
        r"closest: 'loss'",
    ):
        plot_scalars(work_dir, keys=["loss", "los"])


def test_an_empty_key_list_is_an_error(work_dir):
    with pytest.raises(ValueError, match="no keys given to plot"):
        plot_scalars(work_dir, keys=[])


def test_malformed_json_line_names_file_and_line(tmp_path):
    path = tmp_path / "scalars.json"
    path.write_text('{"loss": 1.0, "step": 1}\n\n{"loss": 0.5, "step": 2\n')
    with pytest.raises(ValueError, match=r"scalars\.json:3: malformed JSON"):
        read_scalars(path)
    path.write_text('{"loss": 1.0, "step": 1}\n[1, 2]\n')
    with pytest.raises(ValueError, match=r"scalars\.json:2: expected a JSON object per line"):
        read_scalars(path)


def test_a_last_line_cut_short_by_a_crash_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "scalars.json"
    path.write_text('{"loss": 1.0, "step": 1}\n{"loss": 0.5, "step": 2}\n{"loss": 0.2')
    with pytest.warns(UserWarning, match=r"scalars\.json:3: skipped the last line, cut short"):
        series = read_scalars(path)
    assert (series["loss"].steps, series["loss"].values) == ([1, 2], [1.0, 0.5])
    result = run_cli("plot", path, "--out", tmp_path / "curves.png")
    assert result.returncode == 0, result.stderr
    assert "cut short" in result.stderr and (tmp_path / "curves.png").is_file()


def test_a_line_without_step_is_named(tmp_path):
    path = tmp_path / "scalars.json"
    path.write_text('{"loss": 1.0}\n')
    with pytest.raises(ValueError, match=r"scalars\.json:1: the line has no numeric 'step'"):
        read_scalars(path)


@pytest.mark.parametrize(
    "content",
    ["", '{"step": 1, "epoch": 1, "note": "text"}\n'],
    ids=["empty", "only-counters-and-text"],
)
def test_no_numeric_data_is_an_error(tmp_path, content):
    path = tmp_path / "scalars.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=r"no numeric data to plot in .*scalars\.json"):
        plot_scalars(path)


def test_non_numbers_are_skipped_and_non_finite_values_are_gaps(tmp_path):
    path = tmp_path / "scalars.json"
    path.write_text(
        '{"loss": NaN, "mode": "val", "step": 1}\n{"loss": Infinity, "step": 2}\n'
        '{"loss": 0.5, "flag": true, "step": 3}\n'
    )
    series = read_scalars(path)
    assert set(series) == {"loss", "step"}
    assert np.isnan(series["loss"].values[:2]).all() and series["loss"].values[2] == 0.5


def run_cli(*arguments, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "treadle.visual", *map(str, arguments)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def test_cli_plots_a_work_dir(work_dir, tmp_path):
    out = tmp_path / "loss.png"
    result = run_cli("plot", work_dir, "--keys", "loss,acc/top1", "--out", out)
    assert result.returncode == 0, result.stderr
    assert "20240101_000000" in result.stdout and "scalars.json" in result.stdout
    assert f"wrote {out}: 2 panels (loss, acc/top1)" in result.stdout
    with Image.open(out) as image:
        assert image.format == "PNG"
        pixels = np.asarray(image.convert("RGB"))
    assert len(dark_horizontal_edges(pixels, min_length=200)) == 4


def test_cli_default_out(work_dir):
    result = run_cli("plot", work_dir)
    assert result.returncode == 0, result.stderr
    assert (work_dir / "20240101_000000" / "vis_data" / "curves.png").is_file()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["plot", "missing"], "error: no such file or directory: 'missing'"),
        (["plot", "."], r"error: no scalars.json under '.'"),
        (["plot", "work", "--keys", "lss"], "error: unknown key 'lss'.*closest: 'loss'"),
        (["plot", "work", "--keys", ","], "expected comma-separated key names"),
        (["draw"], "invalid choice: 'draw'"),
    ],
    ids=["missing-path", "no-scalars", "unknown-key", "empty-keys", "unknown-command"],
)
def test_cli_bad_input_exits_non_zero_with_a_message(tmp_path, arguments, message):
    log_run(tmp_path / "work" / "20240101_000000", iterations=20)
    (tmp_path / "other").mkdir()
    result = run_cli(*arguments, cwd=tmp_path / "other" if arguments[1:2] == ["."] else tmp_path)
    assert result.returncode != 0
    assert re.search(message, result.stderr), result.stderr
