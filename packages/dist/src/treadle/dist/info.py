"""Who this process is in its process group: rank, world size, backend, default group.

Every function answers for a single process when ``torch.distributed`` is not initialized
(rank 0, world size 1, no backend), so the same code runs with and without a launcher.
"""

from __future__ import annotations

import torch.distributed as torch_dist
from torch.distributed import ProcessGroup


def is_distributed() -> bool:
    """Return True when ``torch.distributed`` is available and its default group initialized."""
    return torch_dist.is_available() and torch_dist.is_initialized()


def get_default_group() -> ProcessGroup | None:
    """Return the default (world) process group, or None when not distributed."""
    if not is_distributed():
        return None
    return torch_dist.group.WORLD


def _group_or_world(group: ProcessGroup | None) -> ProcessGroup:
    # Older torch releases reject group=None in some calls: name the world group explicitly.
    return torch_dist.group.WORLD if group is None else group


def get_backend(group: ProcessGroup | None = None) -> str | None:
    """Return the backend of ``group`` (default: the world group) in lower case, e.g. ``'gloo'``.

    Returns None when not distributed.
    """
    if not is_distributed():
        return None
    return str(torch_dist.get_backend(_group_or_world(group)))


def get_world_size(group: ProcessGroup | None = None) -> int:
    """Return the number of processes in ``group`` (default: the world group); 1 when not
    distributed."""
    if not is_distributed():
        return 1
    return torch_dist.get_world_size(_group_or_world(group))


def get_rank(group: ProcessGroup | None = None) -> int:
    """Return the rank of this process in ``group`` (default: the world group); 0 when not
    distributed."""
    if not is_distributed():
        return 0
    return torch_dist.get_rank(_group_or_world(group))


def get_dist_info(group: ProcessGroup | None = None) -> tuple[int, int]:
    """Return ``(rank, world_size)`` of this process in ``group``; ``(0, 1)`` when not
    distributed."""
    return get_rank(group), get_world_size(group)


def is_main_process(group: ProcessGroup | None = None) -> bool:
    """Return True on rank 0 of ``group`` (always True when not distributed)."""
    return get_rank(group) == 0
