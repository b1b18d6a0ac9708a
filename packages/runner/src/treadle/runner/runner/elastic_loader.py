"""The train loader of an elastic run: global batches shared by the processes.

:func:`elastic_batches` turns the pieces :func:`.dataloader.build_dataloader` built (the
sampler, the collate function, what is left of the config) into an elastic loader's: an
:class:`~treadle.runner.dataset.elastic_sampler.ElasticBatchSampler` in place of the batch size,
and, with gradient accumulation, a collate function that makes micro-batches. The loader then
reads every sample with per-sample randomness (``NamingDataLoader(keyed_samples=True)``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from treadle.logging import print_log
from treadle.runner.dataset.elastic_plan import ElasticPlan
from treadle.runner.dataset.elastic_sampler import ElasticBatchSampler
from treadle.runner.dataset.micro_batches import MicroBatchCollate


def elastic_batches(
    cfg: dict[str, Any],
    sampler: Any,
    batch_sampler: Any,
    collate_fn: Callable,
    plan: ElasticPlan,
    where: str,
) -> tuple[ElasticBatchSampler, Callable]:
    """(the batch sampler, the collate function) of an elastic train loader; pops
    ``batch_size``, ``drop_last`` and ``shuffle`` from ``cfg`` (the plan decides them)."""
    if batch_sampler is not None:
        raise ValueError(
            f"{where}.batch_sampler cannot be used with elastic: elastic builds the batches "
            f"itself (each process's part of every global batch of "
            f"{plan.global_batch_size}); remove {where}.batch_sampler"
        )
    batch_size = cfg.pop("batch_size", None)
    drop_last = bool(cfg.pop("drop_last", False))
    cfg.pop("shuffle", None)
    if batch_size is not None and batch_size != plan.micro_batch:
        print_log(
            f"{where}.batch_size={batch_size} is not used: with elastic each of the "
            f"{plan.world_size} process(es) takes {_shares(plan)} samples of every global "
            f"batch of {plan.global_batch_size}"
            + (f", in {plan.micro_steps} micro-batches" if plan.micro_steps > 1 else ""),
            logger="current",
            level=logging.INFO,
        )
    batches = ElasticBatchSampler(sampler, plan, drop_last=drop_last)
    if plan.micro_steps > 1:
        collate_fn = MicroBatchCollate(collate_fn, plan.micro_steps)
    return batches, collate_fn


def _shares(plan: ElasticPlan) -> str:
    if plan.even:
        return str(plan.per_rank)
    return "/".join(str(plan.share(rank)) for rank in range(plan.world_size))
