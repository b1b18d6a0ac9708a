"""DefaultSampler and InfiniteSampler in one process: their orders, and resuming from a
state_dict at every position (the multi-process behaviour is in test_sampler_groups.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader

from treadle.runner.dataset import DefaultSampler, InfiniteSampler
from treadle.runner.registry import DATA_SAMPLERS


def permutation(length: int, seed: int) -> list[int]:
    generator = torch.Generator()
    generator.manual_seed(seed)
    return torch.randperm(length, generator=generator).tolist()


def test_default_sampler_order_is_randperm_of_seed_plus_epoch():
    sampler = DefaultSampler(range(20), seed=7)
    assert len(sampler) == 20
    assert list(sampler) == permutation(20, 7)
    assert list(sampler) == permutation(20, 7)  # the same epoch gives the same order
    sampler.set_epoch(3)
    assert list(sampler) == permutation(20, 10)


def test_default_sampler_without_shuffle():
    assert list(DefaultSampler(range(5), shuffle=False, seed=0)) == [0, 1, 2, 3, 4]


def test_seed_none_is_drawn_from_numpy_random():
    # treadle.dist.sync_random_seed draws from NumPy's global stream, as MMEngine's does.
    np.random.seed(5)
    first = DefaultSampler(range(50)).seed
    np.random.seed(5)
    assert DefaultSampler(range(50)).seed == first
    np.random.seed(5)
    assert InfiniteSampler(range(50)).seed == first
    assert isinstance(first, int) and 0 <= first < 2**31


def test_samplers_build_from_the_registry():
    sampler = DATA_SAMPLERS.build(dict(type="DefaultSampler", dataset=range(4), seed=1))
    assert isinstance(sampler, DefaultSampler)
    infinite = DATA_SAMPLERS.build(dict(type="InfiniteSampler", dataset=range(4), shuffle=False))
    assert list(itertools.islice(infinite, 6)) == [0, 1, 2, 3, 0, 1]


@pytest.mark.parametrize("length", [1, 2, 9])
@pytest.mark.parametrize("shuffle", [True, False])
def test_default_sampler_resumes_at_every_position(length, shuffle):
    original = DefaultSampler(range(length), shuffle=shuffle, seed=3)
    original.set_epoch(2)
    full = list(original)
    for position in range(length + 1):
        iterator = iter(original)
        consumed = [next(iterator) for _ in range(position)]
        state = original.state_dict()
        assert state["position"] == position and state["epoch"] == 2
        resumed = DefaultSampler(range(length), shuffle=shuffle, seed=99)
        resumed.load_state_dict(state)
        resumed.set_epoch(2)  # the loop sets the epoch it resumes; the position stays
        assert consumed + list(resumed) == full
        # Only the first iterator is cut short; the next epoch is whole and in order.
        resumed.set_epoch(3)
        original.set_epoch(3)
        assert list(resumed) == list(original)
        original.set_epoch(2)


def test_position_written_into_the_state_is_where_the_resumed_run_starts():
    sampler = DefaultSampler(range(10), seed=0)
    iterator = iter(sampler)
    read_ahead = [next(iterator) for _ in range(8)]  # a DataLoader prefetched 8 ...
    state = sampler.state_dict()
    assert state["position"] == 8
    state["position"] = 5  # ... but the loop consumed 5
    resumed = DefaultSampler(range(10), seed=0)
    resumed.load_state_dict(state)
    assert list(resumed) == list(sampler)[5:]
    assert read_ahead == list(sampler)[:8]


def test_state_before_any_iteration_and_after_a_new_epoch():
    sampler = DefaultSampler(range(6), seed=0)
    assert sampler.state_dict()["position"] == 0
    list(sampler)
    assert sampler.state_dict()["position"] == 6
    sampler.set_epoch(1)
    assert sampler.state_dict() == {**sampler.state_dict(), "epoch": 1, "position": 0}


def test_a_resumed_sampler_reports_its_position_before_and_while_iterating():
    sampler = DefaultSampler(range(6), seed=0)
    sampler.load_state_dict({**sampler.state_dict(), "position": 4})
    assert sampler.state_dict()["position"] == 4
    iterator = iter(sampler)
    next(iterator)
    assert sampler.state_dict()["position"] == 5


def test_set_epoch_to_another_epoch_drops_a_loaded_position():
    sampler = DefaultSampler(range(6), seed=0)
    sampler.load_state_dict({**sampler.state_dict(), "position": 4})
    sampler.set_epoch(1)
    assert len(list(sampler)) == 6


def test_resume_through_a_dataloader():
    dataset = list(range(23))
    sampler = DefaultSampler(dataset, seed=4)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
    batches = [batch.tolist() for batch in loader]
    consumed = iter(loader)
    for _ in range(3):
        next(consumed)
    state = sampler.state_dict()
    state["position"] = 3 * 4  # what the loop consumed
    resumed_sampler = DefaultSampler(dataset, seed=0)
    resumed_sampler.load_state_dict(state)
    resumed = DataLoader(dataset, batch_size=4, sampler=resumed_sampler)
    assert [batch.tolist() for batch in resumed] == batches[3:]


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("world_size", 2, r"saved with world_size=2: this sampler has world_size=1"),
        ("dataset_length", 11, r"saved with dataset_length=11: this sampler has dataset_length=10"),
        ("shuffle", False, r"saved with shuffle=False: this sampler has shuffle=True"),
        ("round_up", False, r"saved with round_up=False: this sampler has round_up=True"),
    ],
)
def test_default_sampler_refuses_a_state_of_another_split(key, value, message):
    sampler = DefaultSampler(range(10), seed=0)
    with pytest.raises(ValueError, match=message):
        sampler.load_state_dict({**sampler.state_dict(), key: value})


@pytest.mark.parametrize(
    ("position", "error", "message"),
    [
        (-1, ValueError, "position must be a non-negative int, got -1"),
        (1.5, ValueError, "position must be a non-negative int, got 1.5"),
        (11, ValueError, r"position 11 is past the end of an epoch of this rank \(10 samples\)"),
    ],
)
def test_default_sampler_refuses_a_bad_position(position, error, message):
    sampler = DefaultSampler(range(10), seed=0)
    with pytest.raises(error, match=message):
        sampler.load_state_dict({**sampler.state_dict(), "position": position})


def test_a_state_missing_keys_or_not_a_dict():
    sampler = DefaultSampler(range(10), seed=0)
    state = sampler.state_dict()
    del state["seed"]
    with pytest.raises(KeyError, match="has no 'seed'"):
        sampler.load_state_dict(state)
    with pytest.raises(TypeError, match=r"DefaultSampler.load_state_dict needs a dict, got list"):
        sampler.load_state_dict([1])
    infinite = InfiniteSampler(range(10), seed=0)
    with pytest.raises(KeyError, match=r"has no 'round_up'.*was it saved by a DefaultSampler"):
        sampler.load_state_dict(infinite.state_dict())


def test_infinite_sampler_stream_is_one_generator_of_permutations():
    generator = torch.Generator()
    generator.manual_seed(11)
    expected = [i for _ in range(4) for i in torch.randperm(5, generator=generator).tolist()]
    sampler = InfiniteSampler(range(5), seed=11)
    assert len(sampler) == 5
    first = list(itertools.islice(iter(sampler), 7))
    # A new iterator continues the same stream.
    assert first + list(itertools.islice(iter(sampler), 13)) == expected


@pytest.mark.parametrize("shuffle", [True, False])
def test_infinite_sampler_resumes_at_every_position(shuffle):
    reference = list(itertools.islice(InfiniteSampler(range(4), shuffle, seed=2), 30))
    for position in range(17):
        sampler = InfiniteSampler(range(4), shuffle=shuffle, seed=2)
        iterator = iter(sampler)
        for _ in range(position):
            next(iterator)
        state = sampler.state_dict()
        assert state["position"] == position and state["epoch"] == position // 4
        resumed = InfiniteSampler(range(4), shuffle=shuffle, seed=5)
        resumed.load_state_dict(state)
        assert list(itertools.islice(resumed, 10)) == reference[position : position + 10]


def test_infinite_sampler_refuses_another_split_and_empty_datasets():
    sampler = InfiniteSampler(range(4), seed=0)
    with pytest.raises(ValueError, match="dataset_length=5: this sampler has dataset_length=4"):
        sampler.load_state_dict({**sampler.state_dict(), "dataset_length": 5})
    with pytest.raises(ValueError, match="world_size=4: this sampler has world_size=1"):
        sampler.load_state_dict({**sampler.state_dict(), "world_size": 4})
    with pytest.raises(ValueError, match="InfiniteSampler cannot sample from an empty dataset"):
        next(iter(InfiniteSampler([], seed=0)))
    sampler.set_epoch(5)  # does nothing: the stream has no epochs
    assert next(iter(sampler)) == permutation(4, 0)[0]
