"""The README's main job end to end: `treadle train examples/digits/config.py`, then resume,
test the best checkpoint and plot, through the real Runner."""

from __future__ import annotations

import json
import os
import pickle
import pty
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sklearn")
_runner_module = pytest.importorskip("treadle.runner.runner")
if not hasattr(_runner_module, "Runner"):
    pytest.skip("treadle.runner.runner.Runner has not landed yet", allow_module_level=True)

from treadle.runner.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CONFIG = str(ROOT / "examples" / "digits" / "config.py")


def _scalars(work_dir: Path) -> list[dict]:
    (path,) = sorted(work_dir.glob("*/vis_data/scalars.json"))[-1:]
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work_dir = tmp_path_factory.mktemp("digits")
    assert main(["train", CONFIG, "--work-dir", str(work_dir), "--no-progress"]) == 0
    return work_dir


def test_main_job_reaches_95_percent_and_keeps_the_expected_files(trained):
    accuracies = [line["accuracy/top1"] for line in _scalars(trained) if "accuracy/top1" in line]
    assert len(accuracies) == 20  # validated every epoch
    assert accuracies[-1] >= 95.0
    names = {p.name for p in trained.iterdir() if p.is_file()}
    best = [n for n in names if n.startswith("best_accuracy_top1_epoch_")]
    assert len(best) == 1
    # config.py: the config as run, dumped into work_dir as MMEngine does.
    assert names == {"config.py", "epoch_19.pth", "epoch_20.pth", "last_checkpoint", *best}
    assert Path(trained / "last_checkpoint").read_text().strip().endswith("epoch_20.pth")
    (run_dir,) = [p for p in trained.iterdir() if p.is_dir()]
    assert (run_dir / f"{run_dir.name}.log").is_file()
    for name in ("scalars.json", "config.py", "curves.png"):
        assert (run_dir / "vis_data" / name).is_file(), name


def test_log_lines_have_mmengine_format(trained):
    (log,) = trained.glob("*/*.log")
    text = log.read_text()
    assert "Epoch(train)  [1][15/45]" in text or "Epoch(train) [1][15/45]" in text
    assert "Epoch(val) [20][3/3]" in text
    assert "accuracy/top1:" in text


def test_test_the_best_checkpoint_and_dump_predictions(trained, tmp_path, capsys):
    (best,) = trained.glob("best_accuracy_top1_epoch_*.pth")
    out = tmp_path / "preds.pkl"
    work_dir = tmp_path / "test"
    code = main(
        ["test", CONFIG, str(best), "--work-dir", str(work_dir), "--out", str(out), "--no-progress"]
    )
    assert code == 0
    with open(out, "rb") as file:
        assert len(pickle.load(file)) == 359
    (log,) = work_dir.glob("*/*.log")
    assert "Epoch(test) [3/3]" in log.read_text()


def test_resume_continues_from_the_last_epoch(trained, tmp_path):
    work_dir = tmp_path / "resumed"
    work_dir.mkdir()
    for name in ("epoch_20.pth",):
        (work_dir / name).write_bytes((trained / name).read_bytes())
    code = main(
        [
            "train",
            CONFIG,
            "--work-dir",
            str(work_dir),
            "--resume",
            "--no-progress",
            "--cfg-options",
            "train_cfg.max_epochs=21",
        ]
    )
    assert code == 0
    (log,) = work_dir.glob("*/*.log")
    text = log.read_text()
    assert "Epoch(train) [21][15/45]" in text
    assert "Epoch(train) [1][" not in text
    assert (work_dir / "epoch_21.pth").is_file()


def test_plot_command(trained, capsys):
    assert main(["plot", str(trained), "--keys", "loss,accuracy/top1"]) == 0
    assert "2 panels (loss, accuracy/top1)" in capsys.readouterr().out


def test_on_a_terminal_a_live_bar_runs_above_the_log_lines(tmp_path):
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "treadle.runner",
            "train",
            CONFIG,
            "--work-dir",
            str(tmp_path),
            "--cfg-options",
            "train_cfg.max_epochs=1",
        ],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "120"},
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=120) == 0
    screen = b"".join(chunks).decode(errors="replace")
    assert "Epoch 1/1" in screen
    assert "loss:" in screen and "eta" in screen
    assert "Epoch(train) [1][15/45]" in screen
