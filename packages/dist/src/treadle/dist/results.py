"""Collecting per-rank results (e.g. predictions during evaluation) on rank 0, in dataset order.

Distributed samplers deal the dataset out round-robin (rank ``r`` gets samples ``r``,
``r + world_size``, ...) and may pad it so every rank has as many samples; collecting
interleaves the parts back into dataset order and drops the padding by keeping ``size``
results. Fewer results than ``size`` is an error (MMEngine returns them as they are): it means
``size`` is not the number of results per sample the parts hold, and silently returning them
would hide a metric that lost samples or mixes per-batch and per-sample results.
"""

from __future__ import annotations

import operator
import os
import pickle
from typing import Any

import torch.distributed as torch_dist
from torch.distributed import ProcessGroup

from .collectives import barrier
from .info import get_backend, get_dist_info
from .object_collectives import all_gather_object, gather_object

COLLECT_DEVICES = ("cpu", "gpu", "npu")
# Backends whose object collectives stay in host memory.
_CPU_BACKENDS = ("gloo", "mpi", "ucc")
# (world group, gloo group over it): created once per world, on first use.
_cpu_group_cache: tuple[ProcessGroup, ProcessGroup] | None = None


def _check_size(size: int) -> int:
    try:
        size = operator.index(size)
    except TypeError:
        raise TypeError(f"size must be an integer, got {type(size).__name__}") from None
    if size < 0:
        raise ValueError(f"size must not be negative, got {size}")
    return size


def _in_dataset_order(parts: list[list[Any]], size: int) -> list[Any]:
    gathered = sum(len(part) for part in parts)
    if size > gathered:
        lengths = " + ".join(str(len(part)) for part in parts)
        raise ValueError(
            f"size={size} is larger than the {gathered} results gathered from "
            f"{len(parts)} process(es) ({lengths}): size should be the number of samples the "
            f"results describe (the dataset's length); a metric that keeps one result per "
            f"batch should pass the number of batches"
        )
    ordered = []
    # Round-robin over the ranks; with uneven parts (no padding) the longer parts are the
    # lower ranks', whose extra samples come last in the dataset.
    for index in range(max(len(part) for part in parts)):
        ordered.extend(part[index] for part in parts if index < len(part))
    return ordered[:size]


def _cpu_group() -> ProcessGroup | None:
    """The world group when its backend talks through host memory, else a gloo group over the
    same processes (collective: every rank creates it at the same call)."""
    global _cpu_group_cache
    backend = get_backend() or ""
    if backend in _CPU_BACKENDS:
        return None
    world = torch_dist.group.WORLD
    if _cpu_group_cache is None or _cpu_group_cache[0] is not world:
        _cpu_group_cache = (world, torch_dist.new_group(backend="gloo"))
    return _cpu_group_cache[1]


def collect_results(
    results: list, size: int, device: str = "cpu", tmpdir: str | None = None
) -> list | None:
    """Return the results of all ranks in dataset order on rank 0, None on other ranks.

    ``size``: the dataset's length; ``size`` results are returned, so the padding the sampler
    added is dropped. Fewer than ``size`` results in all is a ValueError.
    ``device``: 'cpu' collects through host memory (object collectives, or files in ``tmpdir``
    when given: a directory every rank can reach), 'gpu' or 'npu' through the backend's
    communication device (``tmpdir`` must be None).

    Example:
        >>> predictions = [model(batch) for batch in loader]  # this rank's share
        >>> everything = collect_results(predictions, size=len(loader.dataset))
        >>> if everything is not None:  # rank 0
        ...     evaluate(everything)
    """
    if device not in COLLECT_DEVICES:
        raise ValueError(
            f"device must be one of {', '.join(map(repr, COLLECT_DEVICES))}, got {device!r}"
        )
    if device != "cpu":
        if tmpdir is not None:
            raise ValueError(
                f"tmpdir={tmpdir!r} is for device='cpu' only: device={device!r} collects "
                f"through the communication device, not files"
            )
        return collect_results_gpu(results, size)
    return collect_results_cpu(results, size, tmpdir)


def collect_results_cpu(result_part: list, size: int, tmpdir: str | None = None) -> list | None:
    """Collect results on rank 0 through host memory; see ``collect_results``.

    Without ``tmpdir``: gloo object collectives (a gloo group is created alongside an NCCL
    world). With ``tmpdir``: each rank writes ``part_<rank>.pkl`` there and rank 0 reads them,
    so ``tmpdir`` must be on a file system shared by all ranks; rank 0 removes the part files.
    """
    size = _check_size(size)
    rank, world_size = get_dist_info()
    if world_size == 1:
        return _in_dataset_order([list(result_part)], size)
    if tmpdir is None:
        parts = gather_object(list(result_part), dst=0, group=_cpu_group())
        return None if parts is None else _in_dataset_order(parts, size)
    return _collect_through_files(result_part, size, tmpdir, rank, world_size)


def _collect_through_files(
    result_part: list, size: int, tmpdir: str, rank: int, world_size: int
) -> list | None:
    os.makedirs(tmpdir, exist_ok=True)
    path = os.path.join(tmpdir, f"part_{rank}.pkl")
    # Written under another name, then renamed: rank 0 never reads half a file.
    with open(f"{path}.tmp", "wb") as file:
        pickle.dump(list(result_part), file, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(f"{path}.tmp", path)
    barrier()

    collected: list | None = None
    error: Exception | None = None
    if rank == 0:
        try:
            collected = _read_parts(tmpdir, world_size, size)
        except Exception as exception:  # raised after the barrier, or the other ranks hang
            error = exception
    # The other ranks wait until rank 0 has read and removed the parts: a next call with the
    # same tmpdir must not overwrite them before.
    barrier()
    if error is not None:
        raise error
    return collected


def _read_parts(tmpdir: str, world_size: int, size: int) -> list:
    parts = []
    paths = [os.path.join(tmpdir, f"part_{rank}.pkl") for rank in range(world_size)]
    try:
        for rank, path in enumerate(paths):
            if not os.path.exists(path):
                raise FileNotFoundError(
                    f"rank {rank}'s results are missing from tmpdir={tmpdir!r} ({path}): "
                    f"tmpdir must be a directory shared by all ranks"
                )
            with open(path, "rb") as file:
                parts.append(pickle.load(file))
    finally:
        for path in paths:
            if os.path.exists(path):
                os.remove(path)
    return _in_dataset_order(parts, size)


def collect_results_gpu(result_part: list, size: int) -> list | None:
    """Collect results on rank 0 through the communication device (the GPU with NCCL, the NPU
    with HCCL); see ``collect_results``. Uses an all-gather, since NCCL has no object gather."""
    size = _check_size(size)
    rank, world_size = get_dist_info()
    if world_size == 1:
        return _in_dataset_order([list(result_part)], size)
    parts = all_gather_object(list(result_part))
    return _in_dataset_order(parts, size) if rank == 0 else None
