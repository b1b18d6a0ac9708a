"""The Runner's side of ``elastic``: the plan checked at start, and which checkpoints a run
may resume at a world size other than the one that saved them.

``elastic=dict(global_batch_size=G[, micro_batch_size=m])`` (a top-level config key and a Runner
argument) is checked as the Runner is built, before anything is built or loaded
(:func:`elastic_setup`): a global batch the processes cannot share equally is refused there,
naming the global batch size, the world size and the setting to change.

A checkpoint's train loop state says where training stands. Without ``elastic`` its sampler
state is one rank's place in that rank's share of the data and each rank's random generators,
which mean the same thing only with the same number of processes; such a checkpoint (also every
checkpoint written before ``elastic`` existed) resumes at its own world size only. With
``elastic`` the sampler state is the global position (samples consumed by all processes
together) with the global batch size and the dataset's length: it resumes at any world size
with the same global batch size and the same dataset (:func:`check_resume_world`).

Example:
    >>> plan = elastic_setup(dict(global_batch_size=64), world_size=4, optim_wrapper=None)
    >>> plan.per_rank
    16
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from treadle.runner.dataset.elastic_plan import ElasticConfigError, ElasticPlan, elastic_plan

from .stateful_parts import train_dataset


def _accumulative_counts(optim_wrapper: Any) -> int:
    if isinstance(optim_wrapper, Mapping):
        if "accumulative_counts" in optim_wrapper:
            return int(optim_wrapper["accumulative_counts"])
        # An OptimWrapperDict config: one wrapper config per optimizer.
        counts = [
            int(value.get("accumulative_counts", 1))
            for value in optim_wrapper.values()
            if isinstance(value, Mapping) and "optimizer" in value
        ]
        return max(counts, default=1)
    return int(getattr(optim_wrapper, "_accumulative_counts", 1) or 1)


def elastic_setup(elastic: Any, world_size: int, optim_wrapper: Any) -> ElasticPlan | None:
    """The elastic plan of this run (None without ``elastic``), checked before anything is
    built: the global batch shared equally by ``world_size`` processes, and no
    ``accumulative_counts`` of the optimizer wrapper (elastic decides the accumulation)."""
    plan = elastic_plan(elastic, world_size)
    if plan is None:
        return None
    counts = _accumulative_counts(optim_wrapper)
    if counts != 1:
        raise ElasticConfigError(
            f"optim_wrapper.accumulative_counts={counts} cannot be used with elastic: elastic "
            f"decides the gradient accumulation from elastic.global_batch_size "
            f"({plan.global_batch_size}) and elastic.micro_batch_size at each world size; "
            f"remove accumulative_counts and set elastic.micro_batch_size to the most samples "
            f"one process may put through one forward/backward"
        )
    return plan


def _dataset_length(runner: Any) -> int | None:
    try:
        return len(train_dataset(runner))
    except TypeError:
        return None


def _where(sampler: Mapping[str, Any]) -> str:
    position = f"{sampler.get('position')} samples"
    if "epoch" in sampler:
        return f"{position} into epoch {sampler['epoch']}"
    return f"{position} into the stream"


def check_resume_world(runner: Any, checkpoint: Mapping[str, Any], filename: str) -> None:
    """Refuse, before anything is restored, a checkpoint whose train loop state this run
    cannot continue: another world size without a global position, another global batch
    size, another dataset length, or an elastic checkpoint resumed without ``elastic``."""
    loop = checkpoint.get("loop")
    meta = checkpoint.get("meta", {})
    saved_world = meta.get("world_size")
    if not isinstance(loop, Mapping):
        return
    sampler = loop.get("sampler")
    saved_global = sampler.get("global_batch_size") if isinstance(sampler, Mapping) else None
    plan: ElasticPlan | None = getattr(runner, "_elastic", None)
    world = runner.world_size
    if plan is None:
        if saved_global is not None:
            raise ValueError(
                f"cannot resume from {filename}: it was saved by an elastic run "
                f"(elastic=dict(global_batch_size={saved_global})), whose sampler position "
                f"counts the samples of all processes together; resume it with the same "
                f"elastic=dict(global_batch_size={saved_global}) in the config"
            )
        if saved_world is not None and saved_world != world:
            raise RuntimeError(
                f"cannot resume from {filename}: it was saved by a run of {saved_world} "
                f"processes and this run has {world}. Its train loop state (the sampler's "
                f"position and the random generators of each rank) only means the same thing "
                f"with {saved_world} processes: resume with {saved_world} processes, or start a "
                f"new run with load_from={filename!r} and resume=False to take the weights "
                f"only. (A run with elastic=dict(global_batch_size=...) writes checkpoints that "
                f"resume at any number of processes.)"
            )
        return
    if saved_global is None:
        where = "" if saved_world is None else f" by {saved_world} process(es)"
        raise ValueError(
            f"cannot resume from {filename} with elastic: it was written{where} without a "
            f"global sample position (by a run without elastic, or by treadle-runner before "
            f"0.1.1). Its sampler state is where each rank stood in its own share of the data, "
            f"which does not say which samples the run as a whole has consumed, so it cannot "
            f"go on with elastic's shared global batches at this run's {world} process(es): "
            f"resume it with the config it was written with (no elastic) at "
            f"{saved_world or 'its'} processes, or start a new run from its weights with "
            f"load_from={filename!r} and resume=False"
        )
    if saved_global != plan.global_batch_size:
        raise ValueError(
            f"cannot resume from {filename}: it was saved with elastic global_batch_size="
            f"{saved_global} and this run has elastic.global_batch_size="
            f"{plan.global_batch_size}; its position, iteration counts and schedules are in "
            f"global batches of {saved_global}: resume with global_batch_size={saved_global}"
        )
    saved_length = sampler.get("dataset_length")
    length = _dataset_length(runner)
    if saved_length is not None and length is not None and saved_length != length:
        raise ValueError(
            f"cannot resume from {filename}: the train dataset has {length} samples now and "
            f"had {saved_length} when the checkpoint was saved; the saved global position "
            f"({_where(sampler)}) only "
            f"names the same samples in a dataset of {saved_length}: resume with the same "
            f"dataset, or start a new run with load_from={filename!r} and resume=False"
        )
    if saved_world is not None and saved_world != world:
        runner.logger.info(
            f"elastic: resuming {filename}, saved by {saved_world} process(es), with "
            f"{world}: global position {_where(sampler)}, global batches of "
            f"{plan.global_batch_size}"
        )
