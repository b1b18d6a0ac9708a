"""Asynchronous sharded (FSDP2 / torch.distributed.checkpoint) saves copy the parameters and
the optimizer's state to host memory in the background stager's thread, not on the step that
saved: ``save`` returns first, the optimizer's next step waits for the copy, and the checkpoint
holds exactly what a synchronous save at that iteration holds, buffers the next forward changed
included. A copy that fails on one rank is raised by ``wait()`` on every rank, naming the
checkpoint, and leaves the previous checkpoint of that name. 2-process gloo group:
workers/sharded_staging_scenarios.py."""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path

import gloo_group
import pytest
import torch

from treadle.runner.checkpoint.sharded_staging import (
    THREAD_NAME,
    ShardedStagingError,
    detach_state,
    sharded_storage_key,
)

SCENARIOS = Path(__file__).parent / "workers" / "sharded_staging_scenarios.py"
WORLD_SIZE = 2


@pytest.fixture(scope="module")
def value(tmp_path_factory):
    out_dir = tmp_path_factory.mktemp("sharded_staging")
    results = gloo_group.run_group(SCENARIOS, WORLD_SIZE, out_dir)
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_the_copy_runs_in_the_background_and_the_next_step_waits_for_it(value):
    for rank in range(WORLD_SIZE):
        result = value(rank, "scenario_background_copy_holds_the_step_that_saved")
        assert result["returned_before_copy"], "save() copied the state before returning"
        assert [name.startswith(THREAD_NAME) for name in result["threads"]] == [True]
        assert result["middle_weight_copied_there"]
        # The step after the save started the copy, then waited for it to end.
        assert result["order"][:2] == ["copied", "stepped"]


def test_the_checkpoint_holds_what_a_synchronous_save_holds(value):
    for rank in range(WORLD_SIZE):
        result = value(rank, "scenario_background_copy_holds_the_step_that_saved")
        assert "state_dict.middle.weight" in result["names"]
        assert "optimizer.state.middle.weight.exp_avg" in result["names"]
        assert "state_dict.norm.running_mean" in result["names"]
        assert result["same_as_sync"]
        # The forward after the save changed the buffer; the checkpoint has it as it was.
        assert result["running_mean_changed_since"]


def test_a_failed_copy_is_raised_on_every_rank_naming_the_checkpoint(value):
    for rank in range(WORLD_SIZE):
        result = value(
            rank, "scenario_a_failed_copy_is_raised_on_every_rank_and_keeps_the_previous"
        )
        error = result["error"]
        assert error is not None and error.startswith(f"{ShardedStagingError.__name__}: ")
        assert "the asynchronous save of " in error and "iter_1.pth failed while copying" in error
        assert "on rank 1: MemoryError: no host memory left for the copy" in error
        # The previous checkpoint of that name is still there, complete; the next save works.
        assert result["kept"] == 1
        assert result["next"] == 3


def test_storage_keys_are_those_of_the_memory_a_tensor_lives_in():
    weight = torch.ones(4, 4)
    assert sharded_storage_key(weight[1]) == sharded_storage_key(weight)
    assert sharded_storage_key(weight.clone()) != sharded_storage_key(weight)
    assert sharded_storage_key(torch.ones(0)) is None


def test_without_guarded_optimizers_the_state_is_copied_before_save_returns(value):
    for rank in range(WORLD_SIZE):
        result = value(
            rank, "scenario_without_guarded_optimizers_the_copy_is_made_before_save_returns"
        )
        assert result == {"stager_used": False, "same_as_sync": True}


def test_detach_state_clones_all_but_the_large_step_changed_tensors():
    weight, step, running_mean = torch.ones(512, 512), torch.tensor(3.0), torch.zeros(512)
    small_weight = torch.ones(4)  # step-changed, but cheaper to clone now
    Pair = namedtuple("Pair", "first second")
    inner = {"weight": weight, "step": step, "pair": Pair(running_mean, small_weight)}
    state = {"model": inner, "list": [weight]}
    keys = {sharded_storage_key(t) for t in (weight, step, small_weight)}
    detached, pending = detach_state(state, keys)
    assert detached["model"] is not inner and type(detached["model"]["pair"]) is Pair
    assert [sharded_storage_key(t) for t in pending] == [sharded_storage_key(weight)] * 2
    for original, copy in (
        (step, detached["model"]["step"]),
        (running_mean, detached["model"]["pair"].first),
    ):
        assert torch.equal(copy, original)
        assert sharded_storage_key(copy) != sharded_storage_key(original)
    running_mean.add_(1)  # the forward after the save
    assert detached["model"]["pair"].first.sum() == 0
