"""WorkerStreams: the random streams of DataLoader workers, carried across a resume that reads
no trained batch (random transforms in the workers draw what the uninterrupted run drew)."""

from __future__ import annotations

import random
from functools import partial

import numpy as np
import pytest
import torch
from runner_toys import captured_log
from torch.utils.data import DataLoader, Dataset, IterableDataset

from treadle.runner.dataset import DefaultSampler, worker_init_fn
from treadle.runner.loops.worker_streams import WorkerStreams, resume_plan

# Three workers on a two-core machine: torch's advice against it is not this test's concern.
pytestmark = pytest.mark.filterwarnings("ignore:This DataLoader will create")


class RandomTransforms(Dataset):
    """Each item draws from Python's, NumPy's and torch's generators of the worker."""

    def __len__(self) -> int:
        return 40

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.tensor(
            [index, random.random(), float(np.random.rand()), float(torch.rand(()))]
        )


def _loader(workers: int, persistent: bool = False) -> DataLoader:
    sampler = DefaultSampler(RandomTransforms(), shuffle=True, seed=3)
    return DataLoader(
        RandomTransforms(),
        batch_size=2,
        sampler=sampler,
        num_workers=workers,
        persistent_workers=persistent,
        worker_init_fn=partial(worker_init_fn, num_workers=workers, rank=0, seed=11),
    )


def _passes(loader, streams, passes, stop=None, states=None, skip=0):
    """Batches of ``passes`` passes (set_epoch each); the streams' state at batch ``stop``
    (pass, index) of the first pass that reaches it."""
    seen, saved = [], None
    for epoch in range(passes):
        if epoch:
            loader.sampler.set_epoch(epoch)
        iterator = streams.open(loader, states if epoch == 0 else None)
        for _ in range(skip if epoch == 0 else 0):
            next(iterator)
        for index, batch in enumerate(iterator):
            seen.append(batch)
            if stop == (epoch, index + 1):
                saved = (streams.state(), loader.sampler.state_dict())
    return seen, saved


@pytest.mark.parametrize("persistent", [False, True])
@pytest.mark.parametrize("stop", [1, 13])
def test_a_resumed_pass_draws_what_the_uninterrupted_one_drew(persistent, stop):
    loader = _loader(3, persistent)
    streams = WorkerStreams.attach(loader)
    uninterrupted, (saved, sampler_state) = _passes(loader, streams, 2, stop=(1, stop))

    resumed_loader = _loader(3, persistent)
    resumed_streams = WorkerStreams.attach(resumed_loader)
    resumed_loader.sampler.set_epoch(1)
    # What the loop does: the sampler at the saved position, moved back to the round boundary.
    sampler_state = dict(sampler_state, position=stop * 2)
    skip, states = resume_plan(resumed_streams, saved, resumed_loader, sampler_state)
    assert skip == stop % 3
    resumed_loader.sampler.load_state_dict(sampler_state)
    iterator = resumed_streams.open(resumed_loader, states)
    for _ in range(skip):
        next(iterator)
    rest = list(iterator)
    expected = uninterrupted[20 + stop :]
    assert len(rest) == len(expected)
    for got, want in zip(rest, expected, strict=True):
        assert torch.equal(got, want)


def test_without_the_states_the_workers_draw_other_numbers():
    loader = _loader(3)
    streams = WorkerStreams.attach(loader)
    uninterrupted, (_, sampler_state) = _passes(loader, streams, 1, stop=(0, 6))
    fresh = _loader(3)
    fresh.sampler.load_state_dict(dict(sampler_state, position=12))
    rest = list(fresh)
    assert [int(b[0, 0]) for b in rest] == [int(b[0, 0]) for b in uninterrupted[6:]]
    assert not all(torch.equal(a, b) for a, b in zip(rest, uninterrupted[6:], strict=True))


def test_the_state_of_a_pass_just_begun_is_the_workers_seeding():
    loader = _loader(2)
    streams = WorkerStreams.attach(loader)
    iterator = streams.open(loader)
    next(iterator)
    state = streams.state()
    assert state["skip"] == 1 and state["states"] == [None, None]


def test_nothing_to_record_without_workers_or_with_an_iterable_dataset():
    assert WorkerStreams.attach(_loader(0)) is None

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(4))

    assert WorkerStreams.attach(DataLoader(Stream(), num_workers=2)) is None


def test_a_different_worker_count_is_named_and_not_used():
    loader = _loader(2)
    streams = WorkerStreams.attach(loader)
    saved = dict(workers=3, skip=0, states=[None] * 3)
    with captured_log() as log:
        assert resume_plan(streams, saved, loader, dict(position=4)) == (0, None)
    assert any(
        "written with 3 train DataLoader workers and this run has 2" in m for m in log.messages
    )
