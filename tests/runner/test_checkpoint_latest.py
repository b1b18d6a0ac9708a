"""find_latest_checkpoint: the pointer file when it is right, else the newest complete
checkpoint; half-written and temporary files are never picked."""

from __future__ import annotations

import os

import pytest
import torch

from treadle import fileio
from treadle.runner.checkpoint import find_latest_checkpoint, save_checkpoint


def write(directory, *names) -> list[str]:
    paths = []
    for name in names:
        path = os.path.join(str(directory), name)
        save_checkpoint({"meta": {"name": name}, "w": torch.ones(4)}, path)
        paths.append(path)
    return paths


def point(directory, target: str) -> None:
    with open(os.path.join(str(directory), "last_checkpoint"), "w") as file:
        file.write(target)


def test_the_pointer_is_followed(tmp_path):
    paths = write(tmp_path, "epoch_1.pth", "epoch_2.pth")
    point(tmp_path, paths[1])
    assert find_latest_checkpoint(str(tmp_path)) == paths[1]


def test_without_a_pointer_the_highest_number_wins(tmp_path):
    paths = write(tmp_path, "iter_900.pth", "iter_1000.pth", "iter_200.pth")
    assert find_latest_checkpoint(str(tmp_path)) == paths[1]  # by number, not by name


def test_a_stale_pointer_loses_to_a_newer_complete_checkpoint(tmp_path):
    # stopped after epoch_3.pth was renamed into place, before the pointer moved
    paths = write(tmp_path, "epoch_2.pth", "epoch_3.pth")
    point(tmp_path, paths[0])
    assert find_latest_checkpoint(str(tmp_path)) == paths[1]


def test_a_pointer_to_a_missing_file_falls_back(tmp_path):
    paths = write(tmp_path, "epoch_1.pth")
    point(tmp_path, str(tmp_path / "epoch_2.pth"))
    assert find_latest_checkpoint(str(tmp_path)) == paths[0]


def test_a_half_written_checkpoint_is_ignored(tmp_path):
    paths = write(tmp_path, "epoch_1.pth", "epoch_2.pth")
    cut = tmp_path / "epoch_2.pth"
    cut.write_bytes(cut.read_bytes()[:-50])  # written in place by a writer that crashed
    point(tmp_path, paths[1])
    assert find_latest_checkpoint(str(tmp_path)) == paths[0]
    (tmp_path / "epoch_3.pth").write_bytes(b"")  # created, nothing written yet
    assert find_latest_checkpoint(str(tmp_path)) == paths[0]


def test_temporary_and_unrelated_files_are_never_picked(tmp_path):
    paths = write(tmp_path, "epoch_1.pth")
    (tmp_path / ".epoch_2.pth.0123456789ab.tmp").write_bytes(b"PK\x03\x04partial")
    (tmp_path / "model.pth").write_bytes((tmp_path / "epoch_1.pth").read_bytes())  # no number
    (tmp_path / "epoch_5.log").write_text("log")
    (tmp_path / "epoch_9.pth").mkdir()  # a directory, not a file
    assert find_latest_checkpoint(str(tmp_path)) == paths[0]


def test_nothing_to_resume_gives_none(tmp_path):
    assert find_latest_checkpoint(str(tmp_path)) is None
    assert find_latest_checkpoint(str(tmp_path / "missing")) is None


def test_a_fileio_work_dir():
    paths = write("memory://latest-run/work", "epoch_1.pth", "epoch_4.pth")
    fileio.put_text(paths[0], "memory://latest-run/work/last_checkpoint")
    assert find_latest_checkpoint("memory://latest-run/work") == paths[1]


@pytest.mark.parametrize("name", ["epoch_7.pth", "best_acc_epoch_7.pth"])
def test_a_pointer_to_the_newest_is_returned_as_written(tmp_path, name):
    write(tmp_path, "epoch_6.pth", name)
    point(tmp_path, f"  {tmp_path / name}\n")
    assert find_latest_checkpoint(str(tmp_path)) == str(tmp_path / name)


def test_a_local_pointer_may_name_a_checkpoint_on_another_backend(tmp_path):
    # CheckpointHook(out_dir='s3://...') saves remotely and writes the pointer in work_dir too.
    remote = "memory://latest-remote/run/epoch_3.pth"
    save_checkpoint({"meta": {}, "w": torch.ones(2)}, remote)
    point(tmp_path, remote)
    assert find_latest_checkpoint(str(tmp_path)) == remote
