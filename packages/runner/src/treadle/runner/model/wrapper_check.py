"""is_model_wrapper: is a module a wrapper (DDP, FSDP...) around the model it trains.

Apart from the wrappers themselves, so that BaseModule (which the wrappers' modules import
through BaseModel) can ask it too.
"""

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
