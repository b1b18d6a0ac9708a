"""DefaultSampler and InfiniteSampler in real 2- and 3-process gloo groups
(workers/sampler_scenarios.py): disjoint shares that cover the dataset, with and without
round_up and for lengths that do not divide evenly, and resuming per rank at every position."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import gloo_group
import pytest
import torch

SCENARIOS = Path(__file__).parent / "workers" / "sampler_scenarios.py"
WORLD_SIZES = [2, 3]


@pytest.fixture(scope="module")
def groups(tmp_path_factory):
    return {
        size: gloo_group.run_group(SCENARIOS, size, tmp_path_factory.mktemp(f"samplers{size}"))
        for size in WORLD_SIZES
    }


@pytest.fixture(params=WORLD_SIZES, ids=lambda size: f"{size}ranks")
def group(request, groups):
    size = request.param
    return size, lambda rank, name: gloo_group.scenario_value(groups[size], rank, name)


def permutation(length: int, seed: int) -> list[int]:
    generator = torch.Generator()
    generator.manual_seed(seed)
    return torch.randperm(length, generator=generator).tolist()


def test_default_shares_are_disjoint_and_cover_the_dataset(group):
    size, value = group
    shares = [value(rank, "scenario_default_shares") for rank in range(size)]
    for (length, round_up, shuffle, epoch), _ in shares[0].items():
        per_rank = [share[(length, round_up, shuffle, epoch)] for share in shares]
        order = permutation(length, 5 + epoch) if shuffle else list(range(length))
        if round_up:
            # Each rank gets ceil(n / size) indices; the padding repeats the order's start.
            assert {len(indices) for indices in per_rank} == {math.ceil(length / size)}
            padded = (order * size)[: math.ceil(length / size) * size]
        else:
            assert sum(len(indices) for indices in per_rank) == length
            padded = order
        # Rank r takes every size-th index from r on: interleaving the shares gives the order.
        interleaved = [i for row in itertools.zip_longest(*per_rank) for i in row if i is not None]
        assert interleaved == padded
        if not round_up:
            flat = [i for indices in per_rank for i in indices]
            assert sorted(flat) == list(range(length))  # disjoint and complete


def test_every_rank_draws_the_same_seed(group):
    size, value = group
    assert len({value(rank, "scenario_synced_seed") for rank in range(size)}) == 1


def test_default_sampler_resumes_at_every_position_on_every_rank(group):
    size, value = group
    for rank in range(size):
        assert value(rank, "scenario_default_resume_every_position") == []


def test_every_rank_resumes_from_rank0s_state(group):
    size, value = group
    for rank in range(size):
        full, consumed, rest, saved_by = value(rank, "scenario_default_resume_from_rank0_state")
        assert saved_by == 0
        assert consumed + rest == full


def test_infinite_streams_interleave_into_the_permutations(group):
    size, value = group
    streams = [value(rank, "scenario_infinite_streams") for rank in range(size)]
    for (length, shuffle), _ in streams[0].items():
        generator = torch.Generator()
        generator.manual_seed(3)
        passes = 30 * size // length + 1
        whole = [
            i
            for _ in range(passes)
            for i in (
                torch.randperm(length, generator=generator).tolist() if shuffle else range(length)
            )
        ]
        for rank in range(size):
            assert streams[rank][(length, shuffle)] == whole[rank::size][:30]


def test_infinite_sampler_resumes_at_every_position_on_every_rank(group):
    size, value = group
    for rank in range(size):
        assert value(rank, "scenario_infinite_resume_every_position") == []


def test_a_state_of_another_world_size_is_refused(group):
    size, value = group
    for rank in range(size):
        message = value(rank, "scenario_refuse_other_world_size")
        assert f"world_size={size + 1}: this sampler has world_size={size}" in message
