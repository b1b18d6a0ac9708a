"""Collectives of picklable Python objects, returning their results like MMEngine.

They pickle the objects into byte tensors (``torch.distributed``'s ``*_object`` functions); on
NCCL those tensors go through the current CUDA device, so set it (``init_dist`` does) first.
"""

from __future__ import annotations

from typing import Any

import torch.distributed as torch_dist
from torch.distributed import ProcessGroup

from .errors import DistArgumentTypeError
from .info import get_world_size


def _world(group: ProcessGroup | None) -> ProcessGroup:
    return torch_dist.group.WORLD if group is None else group


def all_gather_object(data: Any, group: ProcessGroup | None = None) -> list[Any]:
    """Return the picklable ``data`` of every rank, in rank order (``[data]`` when not
    distributed).

    Example:
        >>> all_gather_object({"rank": rank})  # 2 ranks: [{'rank': 0}, {'rank': 1}] on both
    """
    world_size = get_world_size(group)
    if world_size == 1:
        return [data]
    gathered: list[Any] = [None] * world_size
    torch_dist.all_gather_object(gathered, data, _world(group))
    return gathered


def gather_object(data: Any, dst: int = 0, group: ProcessGroup | None = None) -> list[Any] | None:
    """Return the picklable ``data`` of every rank, in rank order, on rank ``dst`` (a world
    rank); other ranks get None. Not distributed: ``[data]``.

    Example:
        >>> gather_object(f"hello from {rank}")  # rank 0: ['hello from 0', 'hello from 1']
    """
    world_size = get_world_size(group)
    if world_size == 1:
        return [data]
    gathered: list[Any] | None = [None] * world_size if torch_dist.get_rank() == dst else None
    torch_dist.gather_object(data, gathered, dst, _world(group))
    return gathered


def broadcast_object_list(data: list[Any], src: int = 0, group: ProcessGroup | None = None) -> None:
    """Replace the items of ``data`` on every rank with rank ``src``'s, in place. Every rank
    passes a list of the same length.

    Example:
        >>> config = [load_config()] if rank == 0 else [None]
        >>> broadcast_object_list(config)  # every rank now holds rank 0's config
    """
    if not isinstance(data, list):
        raise DistArgumentTypeError(
            f"broadcast_object_list needs a list, whose items it replaces in place; got "
            f"{type(data).__name__}"
        )
    if get_world_size(group) == 1:
        return
    torch_dist.broadcast_object_list(data, src, _world(group))
