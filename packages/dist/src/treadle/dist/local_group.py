"""The local process group: the processes that run on the same machine as this one.

``init_local_group`` creates it (a collective over the world group, like every
``new_group``). Before it exists, ``get_local_rank`` and ``get_local_size`` read the variables
the launchers set (torchrun's ``LOCAL_RANK``/``LOCAL_WORLD_SIZE``, Open MPI's, Slurm's), and
raise only when none is set.
"""

from __future__ import annotations

import os

import torch.distributed as torch_dist
from torch.distributed import ProcessGroup

from .info import get_world_size, is_distributed

_LOCAL_PROCESS_GROUP: ProcessGroup | None = None
# The world group the local group was carved from: a new world (destroy_process_group, then
# init again) makes the old local group meaningless.
_LOCAL_GROUP_WORLD: ProcessGroup | None = None

LOCAL_RANK_VARIABLES = ("LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID")
LOCAL_SIZE_VARIABLES = ("LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "SLURM_NTASKS_PER_NODE")


def _current_local_group() -> ProcessGroup | None:
    if _LOCAL_PROCESS_GROUP is not None and _LOCAL_GROUP_WORLD is torch_dist.group.WORLD:
        return _LOCAL_PROCESS_GROUP
    return None


def init_local_group(node_rank: int, num_gpus_per_node: int) -> None:
    """Create the group of the ``num_gpus_per_node`` processes of machine ``node_rank``.

    Every process of the world group must call it (``new_group`` is a collective). Ranks
    ``node_rank * num_gpus_per_node`` to ``(node_rank + 1) * num_gpus_per_node - 1`` form the
    group. Does nothing when not distributed.

    Example:
        >>> init_dist("pytorch", backend="gloo")
        >>> init_local_group(node_rank=int(os.environ["GROUP_RANK"]), num_gpus_per_node=8)
        >>> get_local_rank(), get_local_size()
        (3, 8)
    """
    global _LOCAL_PROCESS_GROUP, _LOCAL_GROUP_WORLD
    if not is_distributed():
        return
    if _current_local_group() is not None:
        raise RuntimeError("the local process group already exists: call init_local_group once")
    if num_gpus_per_node < 1 or node_rank < 0:
        raise ValueError(
            f"init_local_group needs node_rank >= 0 and num_gpus_per_node >= 1, got "
            f"node_rank={node_rank}, num_gpus_per_node={num_gpus_per_node}"
        )
    first = node_rank * num_gpus_per_node
    ranks = list(range(first, first + num_gpus_per_node))
    world_size = get_world_size()
    if ranks[-1] >= world_size:
        raise ValueError(
            f"init_local_group(node_rank={node_rank}, num_gpus_per_node={num_gpus_per_node}) "
            f"names ranks {ranks[0]}..{ranks[-1]}, but the world has {world_size} processes"
        )
    _LOCAL_PROCESS_GROUP = torch_dist.new_group(ranks)
    _LOCAL_GROUP_WORLD = torch_dist.group.WORLD


def get_local_group() -> ProcessGroup | None:
    """Return the local process group; None when not distributed.

    Raises RuntimeError when distributed and ``init_local_group`` has not been called.
    """
    if not is_distributed():
        return None
    group = _current_local_group()
    if group is None:
        raise RuntimeError(
            "the local process group does not exist: call init_local_group(node_rank, "
            "num_gpus_per_node) on every process first"
        )
    return group


def _from_environment(variables: tuple[str, ...], what: str) -> int:
    for variable in variables:
        text = os.environ.get(variable, "").strip()
        if text.isdigit():
            return int(text)
    raise RuntimeError(
        f"the {what} is unknown: call init_local_group(node_rank, num_gpus_per_node) on every "
        f"process, or launch with a launcher that sets one of {', '.join(variables)}"
    )


def get_local_rank() -> int:
    """Return the rank of this process among the processes of its machine; 0 when not
    distributed.

    The local group answers when it exists, else the launcher's variables (``LOCAL_RANK``,
    ``OMPI_COMM_WORLD_LOCAL_RANK``, ``SLURM_LOCALID``).
    """
    if not is_distributed():
        return 0
    group = _current_local_group()
    if group is not None:
        return torch_dist.get_rank(group)
    return _from_environment(LOCAL_RANK_VARIABLES, "local rank")


def get_local_size() -> int:
    """Return the number of processes on this machine; 1 when not distributed.

    The local group answers when it exists, else the launcher's variables
    (``LOCAL_WORLD_SIZE``, ``OMPI_COMM_WORLD_LOCAL_SIZE``, ``SLURM_NTASKS_PER_NODE``).
    """
    if not is_distributed():
        return 1
    group = _current_local_group()
    if group is not None:
        return torch_dist.get_world_size(group)
    return _from_environment(LOCAL_SIZE_VARIABLES, "local size")
