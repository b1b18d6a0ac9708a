"""Helpers for models: batch tensors of different sizes, merge loss dicts, find parameters a
loss does not reach, and switch BatchNorm layers to and from SyncBatchNorm."""

from __future__ import annotations

import importlib.util
import logging
import math
from typing import Any

import torch
import torch.fx
import torch.nn as nn

from treadle.logging import print_log


def stack_batch(
    tensor_list: list[torch.Tensor], pad_size_divisor: int = 1, pad_value: int | float = 0
) -> torch.Tensor:
    """Stack tensors of the same number of dimensions into one batch, padding every dimension
    but the first (the channels) at its end, to the largest size in the list rounded up to a
    multiple of ``pad_size_divisor``.

    Example:
        >>> stack_batch([torch.ones(3, 5, 7), torch.ones(3, 6, 4)], pad_size_divisor=4).shape
        torch.Size([2, 3, 8, 8])
    """
    if not isinstance(tensor_list, list):
        raise TypeError(f"stack_batch takes a list of tensors, got {type(tensor_list).__name__}")
    if not tensor_list:
        raise ValueError("stack_batch got an empty list: there is nothing to stack")
    if isinstance(pad_size_divisor, bool) or not isinstance(pad_size_divisor, int):
        raise TypeError(
            f"pad_size_divisor must be an int >= 1, got {type(pad_size_divisor).__name__}: "
            f"{pad_size_divisor!r}"
        )
    if pad_size_divisor < 1:
        raise ValueError(f"pad_size_divisor must be >= 1, got {pad_size_divisor}")
    for index, tensor in enumerate(tensor_list):
        if not isinstance(tensor, torch.Tensor):
            raise TypeError(
                f"stack_batch takes a list of tensors; item {index} is a {type(tensor).__name__}"
            )
    shapes = [tuple(tensor.shape) for tensor in tensor_list]
    if len({len(shape) for shape in shapes}) != 1:
        raise ValueError(
            f"stack_batch needs tensors with the same number of dimensions, got shapes {shapes}"
        )
    if len({shape[0] for shape in shapes}) != 1:
        raise ValueError(
            f"stack_batch pads every dimension but the first (channels), which must be equal; "
            f"got shapes {shapes}"
        )
    largest = [max(sizes) for sizes in zip(*shapes, strict=True)]
    target = [
        largest[0],
        *(math.ceil(size / pad_size_divisor) * pad_size_divisor for size in largest[1:]),
    ]
    if all(list(shape) == target for shape in shapes):
        return torch.stack(tensor_list)
    # One allocation filled with the pad value, each tensor copied into its corner: cheaper
    # than padding each tensor to a new one and stacking the padded copies.
    dtype = tensor_list[0].dtype
    for tensor in tensor_list[1:]:
        dtype = torch.promote_types(dtype, tensor.dtype)
    batch = tensor_list[0].new_full((len(tensor_list), *target), pad_value, dtype=dtype)
    for slot, tensor in zip(batch, tensor_list, strict=True):
        slot[tuple(slice(0, size) for size in tensor.shape)].copy_(tensor)
    return batch


def merge_dict(*args: dict) -> dict:
    """One dict with the items of all ``args``, later ones winning; use it instead of
    ``dict.update`` in code that ``torch.fx.symbolic_trace`` must trace (fx calls it as a leaf).

    Example:
        >>> merge_dict({'loss_cls': 1}, {'loss_bbox': 2})
        {'loss_cls': 1, 'loss_bbox': 2}
    """
    merged: dict = {}
    for position, item in enumerate(args):
        if not isinstance(item, dict):
            raise TypeError(
                f"merge_dict merges dicts; argument {position} is a {type(item).__name__}: {item!r}"
            )
        merged.update(item)
    return merged


# fx cannot trace dict.update: it records merge_dict as one call instead.
merge_dict = torch.fx.wrap(merge_dict)


def detect_anomalous_params(loss: torch.Tensor, model: nn.Module) -> list[str]:
    """Log (at ERROR level, through the current logger) every trainable parameter of ``model``
    that ``loss`` does not depend on, and return their names: those that DDP reports as
    unused and that get no gradient.

    Example:
        >>> model = nn.ModuleDict({'used': nn.Linear(2, 1), 'unused': nn.Linear(2, 1)})
        >>> loss = model['used'](torch.ones(1, 2)).sum()
        >>> detect_anomalous_params(loss, model)  # doctest: +ELLIPSIS
        20... - ERROR - ... - unused.weight with shape (1, 2) is not in the computational graph ...
        20... - ERROR - ... - unused.bias with shape (1,) is not in the computational graph ...
        ['unused.weight', 'unused.bias']
    """
    reached: set[int] = set()
    seen: set[Any] = set()
    # Walked with a stack: a deep graph (a long RNN unroll) would overflow recursion.
    pending = [loss.grad_fn] if loss.grad_fn is not None else []
    while pending:
        node = pending.pop()
        if node in seen:
            continue
        seen.add(node)
        variable = getattr(node, "variable", None)  # AccumulateGrad nodes hold a leaf
        if variable is not None:
            reached.add(id(variable))
        pending.extend(parent for parent, _ in node.next_functions if parent is not None)
    anomalous = []
    for name, param in model.named_parameters():
        if param.requires_grad and id(param) not in reached:
            anomalous.append(name)
            print_log(
                f"{name} with shape {tuple(param.shape)} is not in the computational graph of "
                "the loss",
                logger="current",
                level=logging.ERROR,
            )
    return anomalous


class _BatchNormXd(nn.modules.batchnorm._BatchNorm):
    """BatchNorm for any number of dimensions: what a SyncBatchNorm (which has no fixed
    dimension) reverts to."""

    def _check_input_dim(self, input: torch.Tensor) -> None:
        return


def _copy_batchnorm_state(source: nn.Module, target: nn.Module) -> nn.Module:
    if source.affine:
        # The same Parameter objects: an optimizer built before the conversion keeps working.
        with torch.no_grad():
            target.weight = source.weight
            target.bias = source.bias
    target.running_mean = source.running_mean
    target.running_var = source.running_var
    target.num_batches_tracked = source.num_batches_tracked
    target.training = source.training
    if hasattr(source, "qconfig"):
        target.qconfig = source.qconfig
    return target


def _mmcv_sync_batchnorm() -> type | None:
    if importlib.util.find_spec("mmcv") is None:
        return None
    try:
        from mmcv.ops import SyncBatchNorm
    except ImportError:  # mmcv without its compiled ops ("mmcv-lite")
        return None
    return SyncBatchNorm


def _sync_batchnorm_class(implementation: str) -> type:
    if implementation == "torch":
        return nn.SyncBatchNorm
    if implementation == "mmcv":
        found = _mmcv_sync_batchnorm()
        if found is None:
            raise ImportError(
                "convert_sync_batchnorm(implementation='mmcv') needs mmcv with its compiled ops "
                "(pip install mmcv); implementation='torch' needs nothing"
            )
        return found
    raise ValueError(
        f"convert_sync_batchnorm: implementation must be 'torch' or 'mmcv', got {implementation!r}"
    )


def convert_sync_batchnorm(module: nn.Module, implementation: str = "torch") -> nn.Module:
    """``module`` with every BatchNorm layer replaced by a SyncBatchNorm (torch's, or mmcv's
    with ``implementation='mmcv'``) sharing its parameters and running statistics.

    Example:
        >>> model = convert_sync_batchnorm(nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8)))
        >>> type(model[1]).__name__
        'SyncBatchNorm'
    """
    sync_class = _sync_batchnorm_class(implementation)
    return _convert(module, sync_class)


def _convert(module: nn.Module, sync_class: type) -> nn.Module:
    converted = module
    if isinstance(module, nn.modules.batchnorm._BatchNorm) and not isinstance(module, sync_class):
        converted = _copy_batchnorm_state(
            module,
            sync_class(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
            ),
        )
    for name, child in module.named_children():
        converted.add_module(name, _convert(child, sync_class))
    return converted


def revert_sync_batchnorm(module: nn.Module) -> nn.Module:
    """``module`` with every SyncBatchNorm (torch's, and mmcv's when mmcv is installed)
    replaced by a BatchNorm of any dimension that shares its parameters and statistics: what a
    model trained with SyncBatchNorm needs to run in one process.

    Example:
        >>> model = revert_sync_batchnorm(nn.Sequential(nn.SyncBatchNorm(4)))
        >>> model(torch.ones(2, 4)).shape
        torch.Size([2, 4])
    """
    sync_classes: tuple[type, ...] = (nn.SyncBatchNorm,)
    mmcv_class = _mmcv_sync_batchnorm()
    if mmcv_class is not None:
        sync_classes += (mmcv_class,)
    return _revert(module, sync_classes, "")


def _revert(module: nn.Module, sync_classes: tuple[type, ...], path: str) -> nn.Module:
    reverted = module
    if isinstance(module, sync_classes):
        reverted = _copy_batchnorm_state(
            module,
            _BatchNormXd(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
            ),
        )
    for name, child in module.named_children():
        child_path = f"{path}.{name}" if path else name
        try:
            reverted.add_module(name, _revert(child, sync_classes, child_path))
        except Exception as error:
            # Some third-party containers refuse add_module; leave that branch as it is.
            print_log(
                f"revert_sync_batchnorm could not replace {child_path!r} "
                f"({type(child).__name__}): {type(error).__name__}: {error}",
                logger="current",
                level=logging.WARNING,
            )
    return reverted
