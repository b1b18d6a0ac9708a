"""Model state dicts through model wrappers: get_state_dict, load_state_dict, weights_to_cpu.

Both walk the module tree like ``torch.nn.Module.state_dict`` / ``load_state_dict`` but step
into ``.module`` of every registered model wrapper on the way (DDP inside a plain module,
...), so weights carry the names of the wrapped model and load into it wrapped or not.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict, namedtuple
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from treadle import dist
from treadle.logging import print_log
from treadle.runner.utils import apply_to

from .unwrap import is_tta_model, is_wrapper


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _mismatch_message(
    missing_keys: list[str], unexpected_keys: list[str], errors: list[str]
) -> str:
    lines = ["The model and loaded state dict do not match exactly"]
    lines += [error.strip() for error in errors]
    if unexpected_keys:
        lines.append(f"unexpected key in source state_dict: {', '.join(unexpected_keys)}")
    if missing_keys:
        lines.append(f"missing keys in source state_dict: {', '.join(missing_keys)}")
    return "\n".join(lines)


def load_state_dict(
    module: nn.Module,
    state_dict: Mapping[str, Any],
    strict: bool = False,
    logger: logging.Logger | str | None = None,
) -> _IncompatibleKeys:
    """Load ``state_dict`` into ``module`` (through any model wrappers), reporting every
    difference instead of stopping at the first.

    Parameters whose shape differs are left as they are and reported with both shapes.
    ``strict=False`` logs the differences as a warning (on rank 0); ``strict=True`` raises a
    RuntimeError naming them, on every rank. ``num_batches_tracked`` buffers missing from old
    BatchNorm checkpoints are not reported. Returns ``(missing_keys, unexpected_keys)``.

    Example:
        >>> result = load_state_dict(model, torch.load('weights.pth'), strict=False)
        >>> result.missing_keys
        ['head.fc.bias']
    """
    if not isinstance(state_dict, Mapping):
        raise TypeError(
            f"load_state_dict expects a dict of tensors, got {type(state_dict).__name__}"
        )
    missing_keys: list[str] = []
    unexpected_keys: list[str] = []
    errors: list[str] = []
    metadata = getattr(state_dict, "_metadata", None)
    # _load_from_state_dict may change the dict it gets (pre-hooks rename keys): work on a copy.
    state_dict = OrderedDict(state_dict)

    def load(current: nn.Module, local_state_dict: dict, prefix: str = "") -> None:
        while is_wrapper(current) or is_tta_model(current):
            current = current.module
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        current._load_from_state_dict(
            local_state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys, errors
        )
        for name, child in current._modules.items():
            if child is not None:
                child_prefix = f"{prefix}{name}."
                load(
                    child,
                    {k: v for k, v in local_state_dict.items() if k.startswith(child_prefix)},
                    child_prefix,
                )
        incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
        for hook in current._load_state_dict_post_hooks.values():
            if hook(current, incompatible) is not None:
                raise RuntimeError(
                    f"a load_state_dict post-hook of {type(current).__name__} returned a value; "
                    "such hooks change incompatible_keys in place and return None"
                )

    load(module, state_dict)
    missing_keys[:] = [key for key in missing_keys if "num_batches_tracked" not in key]
    if missing_keys or unexpected_keys or errors:
        message = _mismatch_message(missing_keys, unexpected_keys, errors)
        if strict:
            raise RuntimeError(message)
        if dist.get_rank() == 0:
            # None: the current logger (MMEngine prints), so the warning reaches the log file.
            print_log(
                message, logger="current" if logger is None else logger, level=logging.WARNING
            )
    return _IncompatibleKeys(missing_keys, unexpected_keys)


def get_state_dict(
    module: nn.Module,
    destination: OrderedDict | None = None,
    prefix: str = "",
    keep_vars: bool = False,
) -> OrderedDict:
    """The parameters and persistent buffers of ``module`` by name, as
    ``module.state_dict()`` gives them, but through model wrappers at any depth: a
    DistributedDataParallel inside a plain module adds no ``module.`` to the names.

    Example:
        >>> ddp = DistributedDataParallel(model)
        >>> list(get_state_dict(ddp)) == list(model.state_dict())
        True
    """
    while is_wrapper(module):
        module = module.module
    if destination is None:
        destination = OrderedDict()
        destination._metadata = OrderedDict()  # type: ignore[attr-defined]
    local_metadata = {"version": module._version}
    if hasattr(destination, "_metadata"):
        destination._metadata[prefix[:-1]] = local_metadata
    for hook in module._state_dict_pre_hooks.values():
        hook(module, prefix, keep_vars)
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            get_state_dict(child, destination, f"{prefix}{name}.", keep_vars=keep_vars)
    for hook in module._state_dict_hooks.values():
        result = hook(module, destination, prefix, local_metadata)
        if result is not None and not getattr(hook, "_from_public_api", False):
            destination = result
    return destination


def weights_to_cpu(state_dict: Mapping[str, Any]) -> OrderedDict:
    """A copy of ``state_dict`` with every tensor (at any depth) on the CPU, keeping the
    ``_metadata`` of module versions.

    Example:
        >>> cpu_weights = weights_to_cpu(model.cuda().state_dict())
    """
    metadata = getattr(state_dict, "_metadata", OrderedDict())
    moved = apply_to(state_dict, lambda value: hasattr(value, "cpu"), lambda value: value.cpu())
    if not isinstance(moved, OrderedDict):
        moved = OrderedDict(moved)
    moved._metadata = metadata
    return moved


def tensors_to_cpu(value: Any, *, copy: bool = False) -> Any:
    """``value`` with every tensor at any depth detached and on the CPU; dicts, lists and tuples
    are rebuilt (OrderedDict and Counter keep their type, other mappings become dicts), anything
    else is kept. ``copy=True`` copies tensors already on the CPU too, for a snapshot that
    training, which goes on updating the originals in place, does not change.

    Example:
        >>> tensors_to_cpu({'step': torch.tensor(3), 'groups': [torch.ones(1)], 'lr': 0.1})
        {'step': tensor(3), 'groups': [tensor([1.])], 'lr': 0.1}
    """
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=copy)
    if isinstance(value, Mapping):
        items = {key: tensors_to_cpu(item, copy=copy) for key, item in value.items()}
        return type(value)(items) if type(value) in (OrderedDict, Counter) else items
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(tensors_to_cpu(item, copy=copy) for item in value)
    return value
