"""Rank and world size of this process, found without importing torch.

treadle-logging must not depend on torch, yet loggers need the rank to decide what each process
prints. When the program has already initialized ``torch.distributed`` its answer wins;
otherwise the launchers' environment variables tell.
"""

from __future__ import annotations

import os
import sys

# (rank variable, world size variable) pairs, first match wins: torchrun, Slurm, Open MPI,
# MPICH / Intel MPI (PMI).
ENV_VARIABLES = (
    ("RANK", "WORLD_SIZE"),
    ("SLURM_PROCID", "SLURM_NTASKS"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("PMI_RANK", "PMI_SIZE"),
)


def _env_int(variable: str) -> int | None:
    text = os.environ.get(variable)
    if text is None or not text.strip():
        return None
    try:
        value = int(text)
    except ValueError:
        raise ValueError(
            f"environment variable {variable}={text!r} must be an integer (it gives this "
            f"process's rank or the world size)"
        ) from None
    if value < 0:
        raise ValueError(f"environment variable {variable}={text!r} must not be negative")
    return value


def _torch_dist_info() -> tuple[int, int] | None:
    # Only a program that imported torch.distributed itself can have initialized it: looking it
    # up in sys.modules never imports torch.
    dist = sys.modules.get("torch.distributed")
    if dist is None:
        return None
    try:
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except (AttributeError, RuntimeError):
        # A half-imported or torn-down torch.distributed: the environment is the next best source.
        return None
    return None


def get_rank_and_world_size() -> tuple[int, int]:
    """Return ``(rank, world_size)`` of this process.

    Sources, first match wins: an initialized ``torch.distributed`` (used only when the program
    has imported it), then the environment variables ``RANK``/``WORLD_SIZE`` (torchrun),
    ``SLURM_PROCID``/``SLURM_NTASKS``, ``OMPI_COMM_WORLD_RANK``/``OMPI_COMM_WORLD_SIZE``,
    ``PMI_RANK``/``PMI_SIZE``; otherwise ``(0, 1)``. When only a rank variable is set, the world
    size is taken to be at least ``rank + 1``.

    Example:
        >>> rank, world_size = get_rank_and_world_size()  # under torchrun: RANK, WORLD_SIZE
        >>> is_main_process = rank == 0
    """
    info = _torch_dist_info()
    if info is not None:
        return info
    for rank_variable, size_variable in ENV_VARIABLES:
        rank = _env_int(rank_variable)
        if rank is None:
            continue
        world_size = _env_int(size_variable) or 1
        # A rank without a world size (or a smaller one) still proves rank + 1 processes exist.
        return rank, max(world_size, rank + 1)
    return 0, 1


def get_rank() -> int:
    """Return the rank of this process (0 when not distributed)."""
    return get_rank_and_world_size()[0]


def get_world_size() -> int:
    """Return the number of processes (1 when not distributed)."""
    return get_rank_and_world_size()[1]
