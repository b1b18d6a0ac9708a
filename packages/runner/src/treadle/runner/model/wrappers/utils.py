"""is_model_wrapper: is a module a wrapper (DDP, FSDP...) around the model it trains (defined
in ..wrapper_check); unwrap_model: the model inside."""

from __future__ import annotations

import torch.nn as nn

from ..wrapper_check import is_model_wrapper


def unwrap_model(model: nn.Module) -> nn.Module:
    """The model inside a model wrapper (DDP, FSDP, a wrapper registered in MODEL_WRAPPERS),
    or ``model`` itself; a model that merely has a child named ``module`` is kept as it is.

    Example:
        >>> inner = nn.Linear(2, 2)
        >>> unwrap_model(nn.DataParallel(inner)) is inner, unwrap_model(inner) is inner
        (True, True)
    """
    return model.module if is_model_wrapper(model) else model


__all__ = ["is_model_wrapper", "unwrap_model"]
