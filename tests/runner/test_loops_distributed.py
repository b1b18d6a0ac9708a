"""The train loops' random state on two gloo processes: gathered per rank for a checkpoint,
each rank restoring its own (exact resume), and, when a checkpoint holds rank 0's state only
and ranks draw apart (diff_rank_seed), the other ranks kept apart after a resume."""

from pathlib import Path

import gloo_group
import pytest

SCENARIOS = Path(__file__).parent / "workers" / "loop_scenarios.py"


@pytest.fixture(scope="module")
def value(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, 2, tmp_path_factory.mktemp("loops"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_gather_collects_one_state_per_rank(value):
    assert value(0, "scenario_gather") == (2, True)
    assert value(1, "scenario_gather") == (2, True)


def test_rank0_state_keeps_ranks_apart_only_with_diff_rank_seed(value):
    rank0 = value(0, "scenario_rank0_state_with_diff_rank_seed")
    rank1 = value(1, "scenario_rank0_state_with_diff_rank_seed")
    assert rank0[False] == rank1[False]  # same seed on every rank: rank 0's state is right
    assert rank0[True] != rank1[True]
    assert rank0[True] == rank0[False]  # rank 0 itself restores exactly


def test_each_rank_takes_its_own_entry_of_rng_per_rank(value):
    assert value(0, "scenario_per_rank_states") is True
    assert value(1, "scenario_per_rank_states") is True


def test_resume_is_exact_on_every_rank_with_gathered_states(value):
    for rank in (0, 1):
        full, resumed, full_indices, resumed_indices = value(
            rank, "scenario_loop_resume_with_per_rank_states"
        )
        assert resumed_indices == full_indices
        assert resumed == full
