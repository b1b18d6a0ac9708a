"""A named checkpoint that is missing or is no checkpoint is refused with a message naming it
and what is wrong, before anything in the work dir is touched (no log folder, no checkpoint,
no pointer written or deleted)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from runner_toy_model import toy_cfg, unique_name

from treadle.config import Config
from treadle.runner.cli import main
from treadle.runner.runner import Runner


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.fixture
def work_dir(tmp_path) -> Path:
    """A work dir holding a run's checkpoints and pointer."""
    folder = tmp_path / "w"
    Runner.from_cfg(Config(toy_cfg(str(folder), experiment_name=unique_name("bad")))).train()
    return folder


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    text = tmp_path / "notes.txt"
    text.write_text("not a checkpoint\n")
    weights = tmp_path / "weights.pth"
    torch.save({"state_dict": {"w": torch.ones(2)}}, weights)
    bare = tmp_path / "bare.pth"
    torch.save({"linear.weight": torch.ones(2)}, bare)
    missing = tmp_path / "missing.pth"
    return {
        "missing": (missing, f"cannot resume from {missing}: no such checkpoint file"),
        "text": (text, f"cannot resume from {text}: it is not a checkpoint that treadle can read"),
        "weights only": (
            weights,
            f"cannot resume from {weights}: it is not a checkpoint a runner can resume from "
            "(it holds the keys 'state_dict', and no 'meta' with epoch and iter",
        ),
        "bare state dict": (
            bare,
            f"cannot resume from {bare}: it is not a checkpoint a runner can resume from "
            "(it holds the keys 'linear.weight'",
        ),
    }


@pytest.mark.parametrize("kind", ["missing", "text", "weights only", "bare state dict"])
def test_the_runner_refuses_it_before_touching_work_dir(work_dir, tmp_path, kind):
    path, message = _bad_files(tmp_path)[kind]
    before = listing(work_dir)
    cfg = toy_cfg(str(work_dir), experiment_name=unique_name("bad"))
    error = FileNotFoundError if kind == "missing" else ValueError
    with pytest.raises(error) as raised:
        Runner.from_cfg(Config(dict(cfg, resume=True, load_from=str(path))))
    assert message in str(raised.value)
    assert listing(work_dir) == before
    with pytest.raises(error, match="cannot resume from"):
        Runner(**dict(cfg, resume=str(path)))
    assert listing(work_dir) == before


def test_a_weights_only_file_says_how_to_take_its_weights(tmp_path):
    path, _ = _bad_files(tmp_path)["weights only"]
    cfg = toy_cfg(str(tmp_path / "new"), experiment_name=unique_name("bad"))
    with pytest.raises(ValueError, match=r"load_from='.*weights.pth' with resume=False"):
        Runner.from_cfg(Config(dict(cfg, resume=True, load_from=str(path))))
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("kind", ["missing", "text", "weights only"])
def test_treadle_train_resume_says_what_is_wrong_in_one_line(work_dir, tmp_path, kind, capsys):
    path, message = _bad_files(tmp_path)[kind]
    config = tmp_path / "cfg.py"
    cfg = toy_cfg("unused")
    del cfg["work_dir"], cfg["experiment_name"]
    config.write_text("".join(f"{key} = {value!r}\n" for key, value in cfg.items()))
    before = listing(work_dir)
    argv = ["train", str(config), "--work-dir", str(work_dir), "--resume", str(path)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("treadle train: error: ") and message in err
    assert listing(work_dir) == before
