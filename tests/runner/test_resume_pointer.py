"""``last_checkpoint`` names the checkpoint relative to the work dir, so a copied or moved work
dir resumes its own files; MMEngine's pointers (full paths) still work; a pointer naming a
missing file falls back to the newest complete checkpoint, with a warning."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from runner_toy_model import toy_cfg, unique_name
from runner_toys import captured_log

from treadle.config import Config
from treadle.runner.checkpoint import find_latest_checkpoint
from treadle.runner.checkpoint.pointer import pointer_text, read_pointer
from treadle.runner.runner import Runner


def runner_in(work_dir: Path, **overrides) -> Runner:
    cfg = toy_cfg(str(work_dir), experiment_name=unique_name("pointer"), **overrides)
    return Runner.from_cfg(Config(cfg))


@pytest.fixture
def trained(tmp_path) -> Path:
    work_dir = tmp_path / "first"
    runner_in(work_dir).train()
    return work_dir


def test_the_pointer_is_relative_to_its_folder(trained):
    assert (trained / "last_checkpoint").read_text() == "epoch_3.pth"
    assert read_pointer(str(trained)) == str(trained / "epoch_3.pth")
    assert pointer_text("/w", "s3://bucket/w/epoch_3.pth") == "s3://bucket/w/epoch_3.pth"
    assert pointer_text("/w", "/elsewhere/epoch_3.pth") == "/elsewhere/epoch_3.pth"


def test_a_copied_work_dir_resumes_its_own_files(trained, tmp_path):
    copy = tmp_path / "moved"
    shutil.copytree(trained, copy)
    shutil.rmtree(trained)
    assert find_latest_checkpoint(str(copy)) == str(copy / "epoch_3.pth")
    runner = runner_in(copy, resume=True)
    with captured_log(runner.logger) as log:
        runner.load_or_resume()
    assert (runner.epoch, runner.iter) == (3, 12)
    assert any(f"latest checkpoint {copy / 'epoch_3.pth'}" in m for m in log.messages)


def test_an_mmengine_pointer_with_a_full_path_is_followed(trained):
    (trained / "epoch_3.pth").unlink()
    (trained / "last_checkpoint").write_text(str(trained / "epoch_2.pth"))
    assert find_latest_checkpoint(str(trained)) == str(trained / "epoch_2.pth")
    runner = runner_in(trained, resume=True)
    runner.load_or_resume()
    assert (runner.epoch, runner.iter) == (2, 8)


@pytest.mark.parametrize("text", ["epoch_9.pth", "/gone/first/epoch_9.pth"])
def test_a_pointer_to_a_missing_file_falls_back_with_a_warning(trained, text):
    (trained / "last_checkpoint").write_text(text)
    runner = runner_in(trained, resume=True)
    with captured_log(runner.logger) as log:
        runner.load_or_resume()
    assert (runner.epoch, runner.iter) == (3, 12)
    (warning,) = [m for m in log.at(logging.WARNING) if "last_checkpoint names" in m]
    assert "epoch_9.pth, which is missing or incomplete" in warning
    assert f"resuming from {trained / 'epoch_3.pth'}" in warning
