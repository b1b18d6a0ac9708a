"""Tensor collectives with MMEngine's signatures: results are returned (or written in place)
instead of passed in as output lists, tensors may live on any device, and without an
initialized process group every call returns its input unchanged.
"""

from __future__ import annotations

import torch
import torch.distributed as torch_dist
from torch.distributed import ProcessGroup

from .device import get_comm_device
from .info import get_rank, get_world_size, is_distributed

# 'mean' has no ReduceOp that every backend supports (gloo lacks AVG): it is a sum, then a
# division by the world size.
_REDUCE_OPS = {
    "sum": torch_dist.ReduceOp.SUM,
    "mean": torch_dist.ReduceOp.SUM,
    "product": torch_dist.ReduceOp.PRODUCT,
    "min": torch_dist.ReduceOp.MIN,
    "max": torch_dist.ReduceOp.MAX,
    "band": torch_dist.ReduceOp.BAND,
    "bor": torch_dist.ReduceOp.BOR,
    "bxor": torch_dist.ReduceOp.BXOR,
}
REDUCE_OPS = tuple(_REDUCE_OPS)


def check_reduce_op(op: str) -> str:
    """Return ``op`` in lower case, or raise ValueError naming the supported ops."""
    name = op.lower() if isinstance(op, str) else None
    if name not in _REDUCE_OPS:
        raise ValueError(
            f"unsupported reduce op {op!r}: use one of {', '.join(map(repr, REDUCE_OPS))}"
        )
    return name


def _world(group: ProcessGroup | None) -> ProcessGroup:
    return torch_dist.group.WORLD if group is None else group


def _on_comm_device(data: torch.Tensor, device: torch.device) -> torch.Tensor:
    # Backends need contiguous tensors on their own device; data already so is used as is, so
    # the common case (CPU tensors on gloo, GPU tensors on NCCL) copies nothing.
    if not isinstance(data, torch.Tensor):
        raise TypeError(f"data must be a torch.Tensor, got {type(data).__name__}")
    return data.to(device).contiguous()


def divide_for_mean(tensor: torch.Tensor, world_size: int) -> None:
    """Divide a summed tensor in place by ``world_size``; integers round toward zero (their
    dtype is kept, as in MMEngine, where the float mean is copied back into the tensor)."""
    if tensor.is_floating_point() or tensor.is_complex():
        tensor.div_(world_size)
    else:
        tensor.div_(world_size, rounding_mode="trunc")


def all_reduce(data: torch.Tensor, op: str = "sum", group: ProcessGroup | None = None) -> None:
    """Reduce ``data`` over the group, in place: every rank ends with the same result.

    ``op``: 'sum', 'mean', 'product', 'min', 'max', 'band', 'bor' or 'bxor'. The mean of an
    integer tensor stays an integer tensor, rounded toward zero.

    Example:
        >>> loss = torch.tensor([rank + 1.0])
        >>> all_reduce(loss, op="mean")  # 2 ranks: tensor([1.5]) on both
    """
    name = check_reduce_op(op)
    world_size = get_world_size(group)
    if world_size == 1:
        return
    group = _world(group)
    work = _on_comm_device(data, get_comm_device(group))
    torch_dist.all_reduce(work, _REDUCE_OPS[name], group)
    if name == "mean":
        divide_for_mean(work, world_size)
    if work is not data:
        data.copy_(work)


def all_gather(data: torch.Tensor, group: ProcessGroup | None = None) -> list[torch.Tensor]:
    """Return the ``data`` of every rank of the group, in rank order (``[data]`` when not
    distributed). Every rank must pass a tensor of the same shape and dtype.

    Example:
        >>> all_gather(torch.tensor([rank]))  # 2 ranks: [tensor([0]), tensor([1])]
    """
    world_size = get_world_size(group)
    if world_size == 1:
        return [data]
    group = _world(group)
    work = _on_comm_device(data, get_comm_device(group))
    gathered = [torch.empty_like(work) for _ in range(world_size)]
    torch_dist.all_gather(gathered, work, group)
    return [tensor.to(data.device) for tensor in gathered]


def gather(
    data: torch.Tensor, dst: int = 0, group: ProcessGroup | None = None
) -> list[torch.Tensor]:
    """Return the ``data`` of every rank, in rank order, on rank ``dst``; other ranks get ``[]``.

    ``dst`` is a rank of the world group, as in ``torch.distributed.gather``. Not distributed:
    ``[data]``.

    Example:
        >>> gather(torch.tensor([rank]), dst=1)  # rank 1: [tensor([0]), tensor([1])]; rank 0: []
    """
    world_size = get_world_size(group)
    if world_size == 1:
        return [data]
    group = _world(group)
    work = _on_comm_device(data, get_comm_device(group))
    is_dst = torch_dist.get_rank() == dst
    gathered = [torch.empty_like(work) for _ in range(world_size)] if is_dst else None
    torch_dist.gather(work, gathered, dst, group)
    if not is_dst:
        return []
    return [tensor.to(data.device) for tensor in gathered]  # type: ignore[union-attr]


def broadcast(data: torch.Tensor, src: int = 0, group: ProcessGroup | None = None) -> None:
    """Overwrite ``data`` on every rank with rank ``src``'s, in place (a world rank, as in
    ``torch.distributed.broadcast``). Shapes and dtypes must match across ranks.

    Example:
        >>> weights = torch.randn(3)
        >>> broadcast(weights, src=0)  # every rank now holds rank 0's weights
    """
    if get_world_size(group) == 1:
        return
    group = _world(group)
    work = _on_comm_device(data, get_comm_device(group))
    torch_dist.broadcast(work, src, group)
    if work is not data and torch_dist.get_rank() != src:
        data.copy_(work)


def barrier(group: ProcessGroup | None = None) -> None:
    """Wait until every process of the group has reached this call (returns at once when not
    distributed)."""
    if is_distributed():
        torch_dist.barrier(_world(group))


def sync_random_seed(group: ProcessGroup | None = None) -> int:
    """Return a random seed in ``[0, 2**31)`` that is the same on every rank of the group.

    The seed is drawn from NumPy's global random stream on the group's first rank, as in
    MMEngine (so ``np.random.seed`` makes it reproducible, and torch's random stream, which
    model initialization and dropout use, is left alone) and broadcast to the others.

    Example:
        >>> seed = sync_random_seed()  # same number on every rank, e.g. to shuffle a sampler
    """
    import numpy as np  # a dependency of treadle-dist, but not needed to import it

    seed = int(np.random.randint(2**31))
    if get_world_size(group) == 1:
        return seed
    group = _world(group)
    first_rank = torch_dist.get_global_rank(group, 0)
    device = get_comm_device(group)
    shared = torch.tensor([seed if get_rank() == first_rank else 0], dtype=torch.int64)
    shared = shared.to(device)
    torch_dist.broadcast(shared, first_rank, group)
    return int(shared.item())
