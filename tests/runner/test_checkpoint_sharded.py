"""Sharded checkpoint directories (torch.distributed.checkpoint) in one process, without a
process group: written under a temporary name and named once complete, found by
find_latest_checkpoint only when complete, read whole or into a template, and never running code
from the files. Writing from 2 ranks is in test_strategies_fsdp_distributed.py."""

from __future__ import annotations

import logging
import os
import pickle
from collections import Counter

import pytest
import torch

from treadle.runner.checkpoint import UnsafeCheckpointError, find_latest_checkpoint
from treadle.runner.checkpoint.sharded import load_sharded_checkpoint, save_sharded_checkpoint
from treadle.runner.checkpoint.sharded_layout import is_sharded_checkpoint, temporary_path
from treadle.runner.strategies.checkpoint_io import CheckpointIO, ShardedCheckpointIO

pytestmark = pytest.mark.filterwarnings("ignore:torch.distributed is disabled")


def checkpoint(value=1.0):
    return {
        "state_dict": {"w": torch.full((3, 2), value), "b": torch.zeros(2)},
        "meta": {"epoch": int(value), "cfg": "x = 1", "history": [1, 2, 3]},
        "optimizer": {"state": {}, "param_groups": [{"lr": 0.1, "params": ["w", "b"]}]},
        # What DCP alone would change: int keys, empty dicts, tuples, Counters.
        "param_schedulers": [{"milestones": Counter({1: 1, 2: 1}), "last": (1, 2)}],
        "message_hub": {"runtime_info": {}, "by_step": {3: torch.tensor(2.0)}},
    }


@pytest.fixture
def saved(tmp_path):
    path = str(tmp_path / "epoch_1.pth")
    save_sharded_checkpoint(checkpoint(), path)
    return path


def test_a_saved_checkpoint_is_complete_and_reads_back_whole(saved, tmp_path):
    assert is_sharded_checkpoint(saved)
    assert ".metadata" in os.listdir(saved)
    assert not os.path.exists(temporary_path(saved))
    loaded = load_sharded_checkpoint(saved)
    torch.testing.assert_close(loaded["state_dict"]["w"], torch.ones(3, 2))
    assert loaded["meta"] == checkpoint()["meta"]
    assert loaded["optimizer"] == checkpoint()["optimizer"]
    assert loaded["param_schedulers"] == checkpoint()["param_schedulers"]
    assert type(loaded["param_schedulers"][0]["milestones"]) is Counter
    assert loaded["message_hub"]["runtime_info"] == {}
    assert loaded["message_hub"]["by_step"][3] == 2


def test_saving_again_replaces_the_checkpoint_and_clears_a_stale_temporary(saved):
    os.makedirs(os.path.join(temporary_path(saved), "junk"))
    save_sharded_checkpoint(checkpoint(2.0), saved)
    assert load_sharded_checkpoint(saved)["meta"]["epoch"] == 2
    assert sorted(os.listdir(os.path.dirname(saved))) == ["epoch_1.pth"]


def test_template_tensors_of_another_shape_are_named(saved):
    template = {"state_dict": {"w": torch.zeros(3, 3), "b": torch.zeros(2)}}
    # Plain tensors are read whole; their shapes are checked by whoever loads them.
    assert load_sharded_checkpoint(saved, template=template)["state_dict"]["w"].shape == (3, 2)


def test_incomplete_and_missing_checkpoints_say_so(tmp_path, saved):
    os.remove(os.path.join(saved, ".metadata"))
    with pytest.raises(FileNotFoundError, match="not a complete sharded checkpoint: it has no"):
        load_sharded_checkpoint(saved)
    with pytest.raises(FileNotFoundError, match="no sharded checkpoint at"):
        load_sharded_checkpoint(tmp_path / "nothing.pth")
    # On a store (S3, memory://...) .metadata marks a complete one too (test_fault_remote.py).
    with pytest.raises(FileNotFoundError, match="no complete sharded checkpoint at memory://"):
        load_sharded_checkpoint("memory://nothing/epoch_1.pth")


def test_find_latest_checkpoint_takes_complete_directories_only(tmp_path, caplog):
    for epoch in (1, 2, 3):
        save_sharded_checkpoint(checkpoint(float(epoch)), str(tmp_path / f"epoch_{epoch}.pth"))
    os.remove(tmp_path / "epoch_3.pth" / ".metadata")  # cut short
    os.makedirs(temporary_path(str(tmp_path / "epoch_4.pth")))  # being written
    assert find_latest_checkpoint(tmp_path) == str(tmp_path / "epoch_2.pth")
    (tmp_path / "last_checkpoint").write_text(str(tmp_path / "epoch_3.pth"))
    with caplog.at_level(logging.WARNING):
        assert find_latest_checkpoint(tmp_path) == str(tmp_path / "epoch_2.pth")
    (tmp_path / "last_checkpoint").write_text(str(tmp_path / "epoch_2.pth"))
    assert find_latest_checkpoint(tmp_path) == str(tmp_path / "epoch_2.pth")


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_metadata_that_names_other_code_is_refused(saved):
    with open(os.path.join(saved, ".metadata"), "wb") as file:
        pickle.dump(Evil(), file)
    with pytest.raises(pickle.UnpicklingError, match=r"names \w+\.system, which is not part"):
        load_sharded_checkpoint(saved)


class Custom:
    pass


def test_saved_objects_load_with_weights_only(tmp_path):
    path = str(tmp_path / "epoch_1.pth")
    save_sharded_checkpoint({"meta": {"thing": Custom()}}, path)
    with pytest.raises(UnsafeCheckpointError, match=r"epoch_1.pth"):
        load_sharded_checkpoint(path)


def test_checkpoint_ios_read_a_sharded_directory(saved, tmp_path):
    like = {"optimizer": {"state": {}, "param_groups": [{"lr": 0.1, "params": [0, 1]}]}}
    loaded = CheckpointIO().load(saved, template=like)
    assert loaded["optimizer"]["param_groups"][0]["params"] == [0, 1]
    assert ShardedCheckpointIO().load(saved)["meta"]["epoch"] == 1
    # A whole file still loads through the sharded IO (load_from a pretrained .pth).
    torch.save({"state_dict": {"w": torch.ones(1)}}, tmp_path / "weights.pth")
    assert ShardedCheckpointIO().load(str(tmp_path / "weights.pth"))["state_dict"]["w"] == 1
    os.remove(os.path.join(saved, ".metadata"))
    with pytest.raises(FileNotFoundError, match=r"has no .metadata"):
        ShardedCheckpointIO().load(saved)
    # backend_args are taken, as for whole files (a local path is written as it is).
    ShardedCheckpointIO().save(checkpoint(3.0), saved, backend_args={"backend": "local"})
    loaded = ShardedCheckpointIO().load(saved, backend_args={"backend": "local"})
    assert loaded["meta"]["epoch"] == 3


def test_sharded_io_saves_asynchronously_in_one_process(tmp_path):
    io = ShardedCheckpointIO()
    state = checkpoint()
    io.save(state, str(tmp_path / "iter_1.pth"), async_save=True)
    state["state_dict"]["w"].add_(5)  # training goes on: the save holds its own copy
    io.wait()
    loaded = load_sharded_checkpoint(tmp_path / "iter_1.pth")
    torch.testing.assert_close(loaded["state_dict"]["w"], torch.ones(3, 2))
