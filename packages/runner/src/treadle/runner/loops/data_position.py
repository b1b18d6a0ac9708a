"""Where a train loop stands in its data, as a sampler state that resumes without replaying.

A DataLoader reads ahead of the loop (``prefetch_factor * num_workers`` batches), so the
sampler's own position is past what training used. The loop counts the batches it consumed
and turns them into samples here: with torch's ``BatchSampler`` every batch but the last of a
pass holds ``batch_size`` samples; with no worker processes the DataLoader reads nothing
ahead, so the sampler's own position is exact for any batch sampler.
"""

from __future__ import annotations

import logging
from typing import Any

from torch.utils.data import BatchSampler, DataLoader

from treadle.logging import print_log
from treadle.runner.dataset import InfiniteSampler


def stateful_sampler(dataloader: Any) -> Any | None:
    """The sampler of ``dataloader`` that can save and load its position, or None (an elastic
    loader's batch sampler, which holds the global position, comes first)."""
    batch_sampler = getattr(dataloader, "batch_sampler", None)
    for sampler in (
        batch_sampler,
        getattr(batch_sampler, "sampler", None),
        getattr(dataloader, "sampler", None),
    ):
        if hasattr(sampler, "state_dict") and hasattr(sampler, "load_state_dict"):
            return sampler
    return None


def _plain_batch_size(dataloader: Any) -> int | None:
    """The batch size when every full batch has exactly that many samples, else None."""
    batch_sampler = getattr(dataloader, "batch_sampler", None)
    if batch_sampler is None:
        # Automatic batching off: each item of the loader is one sample.
        return 1 if isinstance(dataloader, DataLoader) else None
    if type(batch_sampler).__iter__ is BatchSampler.__iter__:
        return batch_sampler.batch_size
    return None


def consumed_samples(dataloader: Any, sampler: Any, start: int, batches: int) -> int:
    """The position of ``sampler`` after ``batches`` batches of a pass that began at sample
    ``start``: what the loop used, not what the DataLoader read ahead."""
    samples_after = getattr(sampler, "samples_after", None)
    if samples_after is not None:  # an elastic batch sampler: global batches of fixed size
        return samples_after(start, batches)
    batch_size = _plain_batch_size(dataloader)
    if batch_size is not None:
        position = start + batches * batch_size
        if not isinstance(sampler, InfiniteSampler):
            # The last batch of a finite pass may be short.
            position = min(position, len(sampler))
        return position
    if getattr(dataloader, "num_workers", 0) == 0:
        return sampler.state_dict()["position"]
    print_log(
        f"the train dataloader uses {type(dataloader.batch_sampler).__name__} with "
        f"{dataloader.num_workers} workers: the samples a batch holds are unknown, so the "
        f"saved position is the sampler's own, past the batches read ahead; a resumed run "
        f"skips those",
        logger="current",
        level=logging.WARNING,
    )
    return sampler.state_dict()["position"]


def batches_to_samples(dataloader: Any, batches: int) -> int | None:
    """How many samples ``batches`` full batches hold, or None when the loader's batches do
    not have a fixed size (then only replaying finds the position)."""
    batch_size = _plain_batch_size(dataloader)
    return None if batch_size is None else batches * batch_size
