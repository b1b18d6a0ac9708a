"""Corrupt checkpoints: a truncated or garbled file is found on resume, named in a warning, and
auto-resume falls back to the complete checkpoint before it; loading one by name raises an
error that names it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
from runner_toys import captured_log

from treadle.runner.checkpoint import find_latest_checkpoint, save_checkpoint
from treadle.runner.checkpoint.loader import _load_checkpoint
from treadle.runner.checkpoint.verify import checkpoint_problem


def write(directory: Path, *names: str) -> list[str]:
    paths = []
    for number, name in enumerate(names):
        path = str(directory / name)
        save_checkpoint({"meta": {"iter": number}, "state_dict": {"w": torch.arange(500.0)}}, path)
        paths.append(path)
    return paths


def point(directory: Path, target: str) -> None:
    (directory / "last_checkpoint").write_text(target)


def flip(path: str, position: int) -> None:
    data = bytearray(Path(path).read_bytes())
    data[position] ^= 0xFF
    Path(path).write_bytes(bytes(data))


class _Text:
    def __init__(self, capture) -> None:
        self._capture = capture

    @property
    def text(self) -> str:
        return "\n".join(record.getMessage() for record in self._capture.records)


@pytest.fixture
def warnings():
    with captured_log() as capture:
        yield _Text(capture)


def test_a_garbled_newest_checkpoint_falls_back_to_the_one_before(tmp_path, warnings):
    paths = write(tmp_path, "epoch_1.pth", "epoch_2.pth")
    point(tmp_path, paths[1])
    # A byte in the middle of the tensor data: the zip still ends well, and torch.load would
    # return other weights without a word.
    flip(paths[1], os.path.getsize(paths[1]) // 2)
    assert find_latest_checkpoint(str(tmp_path)) == paths[0]
    assert f"the checkpoint {paths[1]} is corrupt: a record fails its CRC check" in warnings.text
    assert "trying the one before it" in warnings.text


def test_a_garbled_start_is_named(tmp_path, warnings):
    paths = write(tmp_path, "iter_10.pth", "iter_20.pth")
    Path(paths[1]).write_bytes(b"\x00garbage" + Path(paths[1]).read_bytes()[9:])
    assert find_latest_checkpoint(str(tmp_path)) == paths[0]
    assert f"{paths[1]} is corrupt: it is neither a torch checkpoint" in warnings.text


def test_a_truncated_pointer_target_is_named(tmp_path, warnings):
    paths = write(tmp_path, "epoch_1.pth", "epoch_2.pth")
    point(tmp_path, paths[1])
    Path(paths[1]).write_bytes(Path(paths[1]).read_bytes()[:300])
    assert find_latest_checkpoint(str(tmp_path)) == paths[0]
    assert f"last_checkpoint names {paths[1]}, which is missing or incomplete" in warnings.text


def test_every_checkpoint_corrupt_gives_none(tmp_path, warnings):
    paths = write(tmp_path, "epoch_1.pth", "epoch_2.pth")
    for path in paths:
        flip(path, os.path.getsize(path) // 2)
    assert find_latest_checkpoint(str(tmp_path)) is None
    assert warnings.text.count("is corrupt") == 2


def test_loading_a_garbled_checkpoint_by_name_names_it(tmp_path):
    (path,) = write(tmp_path, "epoch_1.pth")
    data = bytearray(Path(path).read_bytes())
    # The pickle of the dict (it opens with PROTO 2), not the tensors.
    start = data.index(b"\x80\x02", data.index(b"data.pkl")) + 2
    data[start : start + 8] = b"\xff" * 8
    Path(path).write_bytes(bytes(data))
    with pytest.raises(Exception) as caught:
        _load_checkpoint(path, map_location="cpu")
    assert path in str(caught.value)


def test_loading_a_truncated_checkpoint_by_name_names_it(tmp_path):
    (path,) = write(tmp_path, "epoch_1.pth")
    Path(path).write_bytes(Path(path).read_bytes()[:-40])
    with pytest.raises(RuntimeError, match="is not a complete checkpoint"):
        _load_checkpoint(path, map_location="cpu")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "it is empty"),
        (b"PK\x03\x04 cut", "cut short"),
        (b"hello world, not a checkpoint", "neither a torch checkpoint"),
    ],
)
def test_checkpoint_problem_names_what_is_wrong(tmp_path, content, words):
    path = tmp_path / "x.pth"
    path.write_bytes(content)
    assert words in checkpoint_problem(path)


def test_checkpoint_problem_of_whole_files_is_none(tmp_path):
    (path,) = write(tmp_path, "epoch_1.pth")
    assert checkpoint_problem(path) is None
    legacy = tmp_path / "legacy.pth"
    torch.save({"w": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    assert checkpoint_problem(legacy) is None


def test_a_cut_safetensors_file_is_named(tmp_path):
    pytest.importorskip("safetensors")
    path = tmp_path / "model.safetensors"
    save_checkpoint({"state_dict": {"w": torch.ones(100)}, "meta": {}}, path)
    assert checkpoint_problem(path) is None
    path.write_bytes(path.read_bytes()[:-100])
    assert "cut short" in checkpoint_problem(path)


def test_a_sharded_checkpoint_without_metadata_is_named(tmp_path):
    (tmp_path / "epoch_1.pth").mkdir()
    assert "without .metadata" in checkpoint_problem(tmp_path / "epoch_1.pth")


# -- end to end: the README's main job resumes past a garbled checkpoint


def test_the_main_job_resumes_past_a_garbled_checkpoint(tmp_path):
    pytest.importorskip("sklearn")
    from fault_kill import KillJob, assert_same_weights, context

    ctx = context()
    reference = KillJob(tmp_path / "ref", ctx=ctx).run_uninterrupted(tmp_path / "ref")
    job = KillJob(tmp_path / "job", ctx=ctx, options=["train_cfg.max_epochs=3"])
    job.run_uninterrupted(job.work_dir)
    garbled = job.work_dir / "epoch_3.pth"
    assert (job.work_dir / "last_checkpoint").read_text() == garbled.name
    flip(str(garbled), garbled.stat().st_size // 2)

    job.options = []  # the full 5 epochs
    process = job.start(job.work_dir, None, "resumed.log")
    process.join(120)
    log = (job.work_dir / "resumed.log").read_text()
    assert process.exitcode == 0, log[-3000:]
    assert f"the checkpoint {garbled} is corrupt: a record fails its CRC check" in log
    assert f"Auto resumed from the latest checkpoint {job.work_dir / 'epoch_2.pth'}" in log
    assert_same_weights(job.final_weights(), reference)


def test_an_unnumbered_pointer_loses_to_a_checkpoint_written_after_it(tmp_path):
    # Resumed from preempted.pth, saved epoch_5.pth, killed before the pointer moved.
    (preempted,) = write(tmp_path, "preempted.pth")
    point(tmp_path, preempted)
    assert find_latest_checkpoint(str(tmp_path)) == preempted
    (newer,) = write(tmp_path, "epoch_5.pth")
    os.utime(preempted, (1, 1))
    assert find_latest_checkpoint(str(tmp_path)) == newer
