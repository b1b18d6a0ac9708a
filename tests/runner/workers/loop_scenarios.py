"""Scenarios of the train loops' random state in a real gloo group (run by gloo_rank_runner.py
through test_loops_distributed.py): each returns what this rank saw."""

import os
import sys

import torch

import treadle.dist as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

from loop_stub_runner import LossRecorder, SamplerSeedStub, SnapshotAt, StubRunner

from treadle.runner.loops import capture_rng_state
from treadle.runner.loops.rank_rng import gather_rng_states, pick_rng_state
from treadle.runner.loops.rng_state import restore_rng_state


def scenario_gather(context):
    """(number of states gathered, whether entry [rank] is this rank's own)."""
    torch.manual_seed(100 + dist.get_rank())
    own = capture_rng_state()["torch"]
    states = gather_rng_states()
    return len(states), torch.equal(states[dist.get_rank()]["torch"], own)


def _rank0_state():
    torch.manual_seed(7)
    return capture_rng_state()


def scenario_rank0_state_with_diff_rank_seed(context):
    """The draws after taking rank 0's state with diff_rank_seed=True and False."""
    draws = {}
    for diff_rank_seed in (True, False):
        state, reseed = pick_rng_state(dict(rng=_rank0_state(), rank=0), diff_rank_seed)
        restore_rng_state(state)
        if reseed is not None:
            from treadle.runner.loops.rank_rng import reseed_for_rank

            reseed_for_rank(reseed)
        draws[diff_rank_seed] = torch.rand(3).tolist()
    return draws


def scenario_per_rank_states(context):
    """Whether each rank restored its own entry of rng_per_rank."""
    states = []
    for rank in range(dist.get_world_size()):
        torch.manual_seed(50 + rank)
        states.append(capture_rng_state())
    state, reseed = pick_rng_state(dict(rng=states[0], rng_per_rank=states, rank=0), True)
    restore_rng_state(state)
    torch.manual_seed(50 + dist.get_rank())
    expected = torch.rand(3)
    restore_rng_state(state)
    return reseed is None and torch.equal(torch.rand(3), expected)


def _run(state=None, snapshot=None, seed=0):
    recorder = LossRecorder()
    hooks = [SamplerSeedStub(), recorder] + ([snapshot] if snapshot else [])
    # Each rank its own seeds (diff_rank_seed): the ranks' dropout masks differ.
    runner = StubRunner(
        train=dict(type="EpochBasedTrainLoop", max_epochs=2),
        hooks=hooks,
        seed=seed,
        torch_seed=seed + dist.get_rank(),
    )
    runner._randomness_cfg["diff_rank_seed"] = True
    if state is not None:
        runner.model.load_state_dict(state["model"])
        runner.optim_wrapper.load_state_dict(state["optimizer"])
        runner.train_loop.load_state_dict(state["loop"])
    runner.train_loop.run()
    return runner, recorder


class _GatheringSnapshot(SnapshotAt):
    """Adds every rank's generators, as a checkpoint writer that gathers them would."""

    def _save(self, runner):
        per_rank = runner.train_loop.gather_rng_states()
        super()._save(runner)
        self.snapshot["loop"]["rng_per_rank"] = per_rank


def scenario_loop_resume_with_per_rank_states(context):
    """(this rank's losses after iteration 3 in the full run, in the resumed run)."""
    snapshot = _GatheringSnapshot(iteration=3)
    _, full = _run(snapshot=snapshot)
    _, resumed = _run(state=snapshot.snapshot, seed=5)
    return full.losses[3:], resumed.losses, full.indices[3:], resumed.indices
