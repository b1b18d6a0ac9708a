"""DefaultSampler and InfiniteSampler against MMEngine 0.10's: the same seed gives the same
order (the same use of torch's generator), in one process.

Runs only where mmengine is installed: ``hatch run mmengine:pytest tests/runner/...``.
"""

from __future__ import annotations

import itertools

import pytest

mm = pytest.importorskip("mmengine.dataset")

import treadle.runner.dataset as tr  # noqa: E402


@pytest.mark.parametrize("length", [1, 5, 64])
@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("round_up", [True, False])
def test_default_sampler_orders_match(length, shuffle, round_up):
    ours = tr.DefaultSampler(range(length), shuffle=shuffle, seed=42, round_up=round_up)
    theirs = mm.DefaultSampler(range(length), shuffle=shuffle, seed=42, round_up=round_up)
    assert len(ours) == len(theirs)
    for epoch in range(3):
        ours.set_epoch(epoch)
        theirs.set_epoch(epoch)
        assert list(ours) == list(theirs)


@pytest.mark.parametrize("length", [1, 5, 64])
@pytest.mark.parametrize("shuffle", [True, False])
def test_infinite_sampler_streams_match(length, shuffle):
    ours = tr.InfiniteSampler(range(length), shuffle=shuffle, seed=7)
    theirs = mm.InfiniteSampler(range(length), shuffle=shuffle, seed=7)
    assert len(ours) == len(theirs)
    our_stream, their_stream = iter(ours), iter(theirs)
    assert list(itertools.islice(our_stream, 3 * length + 2)) == list(
        itertools.islice(their_stream, 3 * length + 2)
    )


def test_a_dropped_infinite_iterator_does_not_end_the_stream():
    ours = tr.InfiniteSampler(range(4), seed=7)
    theirs = mm.InfiniteSampler(range(4), seed=7)
    first = list(itertools.islice(iter(ours), 3))
    assert first == list(itertools.islice(iter(theirs), 3))
    # Deliberate: MMEngine's __iter__ is ``yield from`` its shared stream, so closing a
    # dropped iterator closes the stream and every later iterator is empty; treadle's stream
    # goes on.
    assert list(itertools.islice(iter(theirs), 3)) == []
    assert len(list(itertools.islice(iter(ours), 3))) == 3


def test_seed_none_comes_from_pythons_random_in_both():
    import random

    random.seed(3)
    theirs = mm.DefaultSampler(range(3)).seed
    random.seed(3)
    ours = tr.DefaultSampler(range(3)).seed
    # Both draw from Python's random; MMEngine uses np.random.randint(2**31) in
    # sync_random_seed, treadle random.randrange(2**31), so only the range is the same.
    assert 0 <= ours < 2**31 and 0 <= theirs < 2**31


def test_registered_names_match():
    from mmengine.registry import DATA_SAMPLERS as MM_SAMPLERS
    from mmengine.registry import DATASETS as MM_DATASETS
    from mmengine.registry import FUNCTIONS as MM_FUNCTIONS

    from treadle.runner.registry import DATA_SAMPLERS, DATASETS, FUNCTIONS

    for theirs, ours in (
        (MM_SAMPLERS, DATA_SAMPLERS),
        (MM_DATASETS, DATASETS),
        (MM_FUNCTIONS, FUNCTIONS),
    ):
        for name in theirs.module_dict:
            assert ours.get(name) is not None, name
