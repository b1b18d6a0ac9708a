"""Issue 43, one history across resumes: the README's main job trained, resumed from a named
earlier checkpoint (its later lines superseded), then resumed again; `treadle plot`, the curves
drawn at the end of training and `python -m treadle.visual plot` draw every iteration once, from
the first to the last, across the three runs, also after the work dir is moved."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
import torch

pytest.importorskip("sklearn")

from treadle.runner.cli import main
from treadle.visual import read_history
from treadle.visual.__main__ import main as visual_main

ROOT = Path(__file__).resolve().parents[2]
CONFIG = str(ROOT / "examples" / "digits" / "config.py")
ITERS_PER_EPOCH = 45  # 1,438 training images in batches of 32


def _train(work_dir: Path, epochs: int, *resume: str) -> Path:
    """One run of the main job, logging every iteration; returns its run folder."""
    before = {path.name for path in work_dir.iterdir()} if work_dir.exists() else set()
    args = ["train", CONFIG, "--work-dir", str(work_dir), "--no-progress", *resume]
    args += ["--cfg-options", f"train_cfg.max_epochs={epochs}", "default_hooks.logger.interval=1"]
    assert main(args) == 0
    (run,) = [p for p in work_dir.iterdir() if p.is_dir() and p.name not in before]
    time.sleep(1.1)  # the next run's folder is named by another second
    return run


def _lines(run: Path) -> list[dict]:
    return [
        json.loads(line) for line in (run / "vis_data" / "scalars.json").read_text().splitlines()
    ]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    work_dir = tmp_path_factory.mktemp("history") / "digits"
    first = _train(work_dir, 2)  # iterations 1-90, checkpoints at 45 and 90
    # Resumed from the first epoch's checkpoint: the first run's iterations 46-90 are done
    # again, and superseded.
    second = _train(work_dir, 3, "--resume", str(work_dir / "epoch_1.pth"))  # 46-135
    third = _train(work_dir, 4, "--resume")  # the latest checkpoint (135): 136-180
    return work_dir, [first, second, third]


def test_each_run_logged_its_own_iterations(runs):
    _, (first, second, third) = runs
    losses = [[line["iter"] for line in _lines(run) if "loss" in line] for run in runs[1]]
    assert losses == [list(range(1, 91)), list(range(46, 136)), list(range(136, 181))]
    assert not (first / "vis_data" / "resumed_from.json").exists()
    record = json.loads((second / "vis_data" / "resumed_from.json").read_text())
    assert record["run"] == f"../../{first.name}" and record["iter"] == 45
    assert record["epoch"] == 1 and record["checkpoint"] == "../../epoch_1.pth"
    record = json.loads((third / "vis_data" / "resumed_from.json").read_text())
    assert record["run"] == f"../../{second.name}" and record["iter"] == 135
    # Where each checkpoint records its run (what a resume follows).
    for name, run in (("epoch_3.pth", second), ("epoch_4.pth", third)):  # max_keep_ckpts=2
        meta = torch.load(runs[0] / name, map_location="cpu", weights_only=True)["meta"]
        assert meta["log_dir"] == str(run)


def _assert_one_history(history, runs: list[Path]) -> None:
    second = runs[1]
    assert [run.run_dir for run in history.runs] == runs
    assert [run.up_to for run in history.runs] == [45, 135, None]
    assert history.resume_points == [45, 135]
    loss = history.series["loss"]
    assert loss.iteration_axis() == list(range(1, 181))  # every iteration once
    by_run = [
        {line["iter"]: line["loss"] for line in _lines(run) if "loss" in line} for run in runs
    ]
    expected = [by_run[0][i] for i in range(1, 46)] + [by_run[1][i] for i in range(46, 136)]
    assert loss.values == expected + [by_run[2][i] for i in range(136, 181)]
    # Validated after each epoch: the first run's second validation (at 90) was superseded.
    accuracy = history.series["accuracy/top1"]
    assert accuracy.iteration_axis() == [45, 90, 135, 180]
    assert accuracy.steps == [1, 2, 3, 4]  # scalars.json's step of a validation: its epoch
    assert accuracy.values[1] == next(
        line["accuracy/top1"] for line in _lines(second) if "accuracy/top1" in line
    )


def test_the_history_joins_the_three_runs(runs):
    work_dir, run_dirs = runs
    _assert_one_history(read_history(work_dir), run_dirs)


def test_the_curves_drawn_at_the_end_of_training_are_the_history(runs):
    _, (_, second, third) = runs
    log = (third / f"{third.name}.log").read_text()
    assert f"The curves of this run continue those of {second} after iteration 135" in log
    assert "Curves of loss, accuracy/top1 (and the 2 runs it resumed from) saved to" in log
    assert (third / "vis_data" / "curves.png").read_bytes()[:4] == b"\x89PNG"


def test_treadle_plot_draws_the_history_or_the_newest_run(runs, capsys, tmp_path):
    work_dir, (first, second, _) = runs
    assert main(["plot", str(work_dir), "--keys", "loss", "--out", str(tmp_path / "a.png")]) == 0
    out = capsys.readouterr().out
    assert f"with {first / 'vis_data' / 'scalars.json'} up to iteration 45" in out
    assert f"with {second / 'vis_data' / 'scalars.json'} up to iteration 135" in out
    assert main(["plot", str(work_dir), "--single-run", "--out", str(tmp_path / "b.png")]) == 0
    assert "up to iteration" not in capsys.readouterr().out
    single = read_history(work_dir, single_run=True)
    assert single.series["loss"].iteration_axis() == list(range(136, 181))
    assert (
        visual_main(["plot", str(work_dir), "--keys", "loss", "--out", str(tmp_path / "c.png")])
        == 0
    )
    assert "up to iteration 135 (resumed from there)" in capsys.readouterr().out


def test_a_moved_work_dir_keeps_its_history(runs, tmp_path):
    work_dir, run_dirs = runs
    copied = tmp_path / "copied"
    shutil.copytree(work_dir, copied)  # the original is still there: the copy's own runs
    _assert_one_history(read_history(copied), [copied / run.name for run in run_dirs])
    moved = tmp_path / "elsewhere" / "digits"
    shutil.move(str(copied), str(moved))  # nothing at the recorded absolute paths now
    _assert_one_history(read_history(moved), [moved / run.name for run in run_dirs])
