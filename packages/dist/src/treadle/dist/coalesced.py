"""Reductions of many tensors with few collectives: a dict of metrics in one all-reduce, and
model parameters in one all-reduce per bucket.

Each collective has a fixed cost (a round trip between processes, a kernel launch) that dwarfs
the transfer of a scalar, so many small tensors are packed into one flat tensor, reduced once
and unpacked.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, MutableMapping

import torch
from torch.distributed import ProcessGroup

from .collectives import all_reduce, check_reduce_op
from .device import get_comm_device
from .errors import DistArgumentTypeError
from .info import get_world_size


def _common_dtype(tensors: list[torch.Tensor]) -> torch.dtype:
    dtype = tensors[0].dtype
    for tensor in tensors[1:]:
        dtype = torch.promote_types(dtype, tensor.dtype)
    return dtype


def all_reduce_dict(
    data: MutableMapping[str, torch.Tensor], op: str = "sum", group: ProcessGroup | None = None
) -> None:
    """Reduce every tensor of ``data`` over the group with a single collective, in place.

    The values (of any shapes, dtypes and devices) are packed into one tensor of their common
    dtype, reduced once, and each key gets back a tensor of its own shape, dtype and device.
    Every rank must pass the same keys with the same shapes: keys are matched by sorted name,
    and a mismatch is not detected (checking it would cost a second collective).

    Example:
        >>> metrics = {"loss": torch.tensor(0.5), "correct": torch.tensor(30)}
        >>> all_reduce_dict(metrics, op="sum")  # 2 ranks: loss and correct summed over both
    """
    if not isinstance(data, MutableMapping):
        raise DistArgumentTypeError(
            f"all_reduce_dict needs a dict of tensors, got {type(data).__name__}"
        )
    check_reduce_op(op)
    single = get_world_size(group) == 1
    for key, value in data.items():
        if isinstance(value, torch.Tensor):
            continue
        message = (
            f"all_reduce_dict needs tensor values, but data[{key!r}] is {type(value).__name__}"
        )
        if not single:
            raise TypeError(message)
        # One process has nothing to reduce, and MMEngine accepts any values there; the same
        # call fails once there are several processes, so say so now.
        warnings.warn(
            f"{message}: a single process leaves data as it is, several processes will fail",
            stacklevel=2,
        )
    if single or not data:
        return

    # Every rank must pack the values in the same order, whatever order its dict was built in.
    keys = sorted(data)
    values = [data[key] for key in keys]
    dtype = _common_dtype(values)
    device = get_comm_device(group)
    flat = torch.cat([_as_kind(value.reshape(-1), dtype, device) for value in values])
    all_reduce(flat, op=op, group=group)

    pieces = torch.split(flat, [value.numel() for value in values])
    for key, value, piece in zip(keys, values, pieces, strict=True):
        data[key] = _as_kind(piece.view(value.shape), value.dtype, value.device)


def _as_kind(tensor: torch.Tensor, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    # .to() parses its arguments even when there is nothing to do: skip it for the common case
    # of metrics that all share one dtype and device.
    if tensor.dtype == dtype and tensor.device == device:
        return tensor
    return tensor.to(device=device, dtype=dtype)


def _buckets(tensors: list[torch.Tensor], bucket_size_mb: int) -> Iterator[list[torch.Tensor]]:
    """Group tensors by dtype and device (one flat tensor holds one kind), keeping their order;
    with ``bucket_size_mb > 0`` a group is split into buckets of at most that many megabytes
    (a bigger tensor gets a bucket of its own)."""
    kinds: dict[tuple[torch.dtype, torch.device], list[torch.Tensor]] = {}
    for tensor in tensors:
        kinds.setdefault((tensor.dtype, tensor.device), []).append(tensor)
    if bucket_size_mb <= 0:
        yield from kinds.values()
        return
    limit = bucket_size_mb * 1024 * 1024
    for same_kind in kinds.values():
        bucket: list[torch.Tensor] = []
        size = 0
        for tensor in same_kind:
            nbytes = tensor.numel() * tensor.element_size()
            if bucket and size + nbytes > limit:
                yield bucket
                bucket, size = [], 0
            bucket.append(tensor)
            size += nbytes
        if bucket:
            yield bucket


def all_reduce_params(
    params: Iterable[torch.Tensor],
    coalesce: bool = True,
    bucket_size_mb: int = -1,
    op: str = "sum",
    group: ProcessGroup | None = None,
) -> None:
    """Reduce parameters or buffers (``model.parameters()``, ``model.buffers()``, a list of
    tensors) over the group, in place.

    With ``coalesce`` (the default) tensors of one dtype and device are packed into one flat
    tensor per bucket and reduced with one collective per bucket; ``bucket_size_mb`` (when > 0)
    caps a bucket's size. Without it, each tensor is reduced on its own.

    Example:
        >>> all_reduce_params(model.buffers(), op="mean")  # e.g. sync BatchNorm statistics
    """
    check_reduce_op(op)
    if get_world_size(group) == 1:
        return
    tensors = []
    for param in params:
        if not isinstance(param, torch.Tensor):
            raise TypeError(f"all_reduce_params needs tensors, got {type(param).__name__}")
        # .data: reduce the values without autograd seeing an in-place change of a leaf.
        tensors.append(param.data)
    if not coalesce:
        for tensor in tensors:
            all_reduce(tensor, op=op, group=group)
        return
    for bucket in _buckets(tensors, bucket_size_mb):
        if len(bucket) == 1:
            all_reduce(bucket[0], op=op, group=group)
            continue
        flat = torch.cat([tensor.reshape(-1) for tensor in bucket])
        all_reduce(flat, op=op, group=group)
        offset = 0
        for tensor in bucket:
            count = tensor.numel()
            tensor.copy_(flat[offset : offset + count].view_as(tensor))
            offset += count
