"""is_model_wrapper: is a module a wrapper (DDP, FSDP...) around the model it trains;
unwrap_model: the model inside."""

from __future__ import annotations

import inspect

import torch.nn as nn

from treadle.registry import Registry
from treadle.runner.registry import MODEL_WRAPPERS


def _wrapper_classes(registry: Registry) -> tuple[type, ...]:
    # Only classes count: a registered factory function cannot be an instance's type.
    return tuple(value for value in registry.module_dict.values() if inspect.isclass(value))


def is_model_wrapper(model: nn.Module, registry: Registry = MODEL_WRAPPERS) -> bool:
    """Whether ``model`` is an instance of a class registered in ``registry`` (MODEL_WRAPPERS
    by default) or in any of its descendants: DataParallel, DistributedDataParallel, the MM*
    wrappers, and those a downstream project registers in its child registry.

    Example:
        >>> is_model_wrapper(nn.DataParallel(nn.Linear(2, 2)))
        True
        >>> is_model_wrapper(nn.Linear(2, 2))
        False
    """
    pending = [registry]
    while pending:
        current = pending.pop()
        if isinstance(model, _wrapper_classes(current)):
            return True
        pending.extend(current.children.values())
    return False


def unwrap_model(model: nn.Module) -> nn.Module:
    """The model inside a model wrapper (DDP, FSDP, a wrapper registered in MODEL_WRAPPERS),
    or ``model`` itself; a model that merely has a child named ``module`` is kept as it is.

    Example:
        >>> inner = nn.Linear(2, 2)
        >>> unwrap_model(nn.DataParallel(inner)) is inner, unwrap_model(inner) is inner
        (True, True)
    """
    return model.module if is_model_wrapper(model) else model
