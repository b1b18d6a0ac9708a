"""Scenarios of DefaultSampler and InfiniteSampler in a real gloo group (run by
gloo_rank_runner.py through test_sampler_groups.py): each returns what this rank saw."""

import itertools

import treadle.dist as dist
from treadle.runner.dataset import DefaultSampler, InfiniteSampler

LENGTHS = [1, 2, 7, 10, 12]


def scenario_default_shares(context):
    """{(length, round_up, shuffle, epoch): indices of this rank}."""
    shares = {}
    for length, round_up, shuffle in itertools.product(LENGTHS, (True, False), (True, False)):
        sampler = DefaultSampler(range(length), shuffle=shuffle, seed=5, round_up=round_up)
        for epoch in (0, 1):
            sampler.set_epoch(epoch)
            indices = list(sampler)
            assert len(indices) == len(sampler), (length, round_up, len(indices), len(sampler))
            shares[(length, round_up, shuffle, epoch)] = indices
    return shares


def scenario_synced_seed(context):
    """The seed every rank drew with seed=None (they must agree)."""
    return DefaultSampler(range(3)).seed, InfiniteSampler(range(3)).seed


def scenario_default_resume_every_position(context):
    """Positions (length, round_up, position) where the resumed rest was not the original's."""
    wrong = []
    for length, round_up in itertools.product(LENGTHS, (True, False)):
        original = DefaultSampler(range(length), seed=9, round_up=round_up)
        original.set_epoch(4)
        full = list(original)
        for position in range(len(full) + 1):
            iterator = iter(original)
            consumed = [next(iterator) for _ in range(position)]
            resumed = DefaultSampler(range(length), seed=0, round_up=round_up)
            resumed.load_state_dict(original.state_dict())
            if consumed + list(resumed) != full:
                wrong.append((length, round_up, position))
    return wrong


def scenario_default_resume_from_rank0_state(context):
    """Every rank loads rank 0's state (a checkpoint written by rank 0 only) and returns
    (its original epoch, what it consumed, the rest it yields after resuming)."""
    sampler = DefaultSampler(range(11), seed=1, round_up=False)
    sampler.set_epoch(2)
    full = list(sampler)
    iterator = iter(sampler)
    consumed = [next(iterator) for _ in range(2)]
    shared = [sampler.state_dict()]
    dist.broadcast_object_list(shared, src=0)
    resumed = DefaultSampler(range(11), seed=0, round_up=False)
    resumed.load_state_dict(shared[0])
    return full, consumed, list(resumed), shared[0]["rank"]


def scenario_infinite_streams(context):
    """The first 30 indices of this rank's stream, shuffled and not, for several lengths."""
    return {
        (length, shuffle): list(
            itertools.islice(InfiniteSampler(range(length), shuffle, seed=3), 30)
        )
        for length in (1, 2, 5, 7)
        for shuffle in (True, False)
    }


def scenario_infinite_resume_every_position(context):
    """Positions (length, position) where the resumed stream was not the original's."""
    wrong = []
    for length in (1, 2, 5, 7):
        reference = list(itertools.islice(InfiniteSampler(range(length), seed=8), 40))
        for position in range(25):
            sampler = InfiniteSampler(range(length), seed=8)
            iterator = iter(sampler)
            for _ in range(position):
                next(iterator)
            resumed = InfiniteSampler(range(length), seed=0)
            resumed.load_state_dict(sampler.state_dict())
            if list(itertools.islice(resumed, 10)) != reference[position : position + 10]:
                wrong.append((length, position))
    return wrong


def scenario_refuse_other_world_size(context):
    sampler = DefaultSampler(range(10), seed=0)
    state = {**sampler.state_dict(), "world_size": context["world_size"] + 1}
    try:
        sampler.load_state_dict(state)
    except ValueError as error:
        return str(error)
    return None
