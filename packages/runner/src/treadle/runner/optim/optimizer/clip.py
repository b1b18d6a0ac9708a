"""Gradient clipping as the ``clip_grad`` argument of the optimizer wrappers describes it.

``clip_grad=dict(max_norm=1.0)`` (or ``type='norm'``) clips by the total norm with
``torch.nn.utils.clip_grad_norm_``; ``dict(type='value', clip_value=0.5)`` clamps each gradient
with ``clip_grad_value_``. The config is checked when the wrapper is built, so a misspelt key
fails before the first forward pass instead of at the first optimizer step.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch

# type -> (the name the measured size is logged under, the torch function that clips).
CLIP_TYPES: dict[str, tuple[str, Callable[..., Any]]] = {
    "norm": ("grad_norm", torch.nn.utils.clip_grad_norm_),
    "value": ("grad_value", torch.nn.utils.clip_grad_value_),
}


def _arguments(function: Callable[..., Any]) -> tuple[list[str], list[str]]:
    """The (required, optional) keyword arguments of a clip function, without ``parameters``."""
    required, optional = [], []
    for name, parameter in list(inspect.signature(function).parameters.items())[1:]:
        (required if parameter.default is inspect.Parameter.empty else optional).append(name)
    return required, optional


def parse_clip_grad(
    clip_grad: Mapping[str, Any],
) -> tuple[Callable[..., Any], str, dict[str, Any]]:
    """Check ``clip_grad`` and return (clip function, logged name, its keyword arguments).

    The user's mapping is not modified.

    Example:
        >>> function, name, kwargs = parse_clip_grad(dict(type='value', clip_value=0.5))
        >>> name, kwargs
        ('grad_value', {'clip_value': 0.5})
    """
    if not isinstance(clip_grad, Mapping):
        raise TypeError(
            f"clip_grad must be a dict such as dict(max_norm=1.0) or "
            f"dict(type='value', clip_value=0.5), or None; got {type(clip_grad).__name__}: "
            f"{clip_grad!r}"
        )
    kwargs = dict(clip_grad)
    clip_type = kwargs.pop("type", "norm")
    if clip_type not in CLIP_TYPES:
        from treadle.registry.suggestions import close_matches

        close = close_matches(str(clip_type), CLIP_TYPES)
        hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise ValueError(
            f"clip_grad type {clip_type!r} is not one of {', '.join(map(repr, CLIP_TYPES))}{hint}"
        )
    grad_name, function = CLIP_TYPES[clip_type]
    required, optional = _arguments(function)
    unknown = [key for key in kwargs if key not in required and key not in optional]
    if unknown:
        from treadle.registry.suggestions import close_matches

        hints = []
        for key in unknown:
            close = close_matches(str(key), required + optional)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise TypeError(
            f"clip_grad of type {clip_type!r} does not take {', '.join(hints)}; it takes "
            f"{', '.join(required + optional)} (the arguments of torch.nn.utils."
            f"{function.__name__})"
        )
    missing = [key for key in required if key not in kwargs]
    if missing:
        raise TypeError(
            f"clip_grad of type {clip_type!r} needs {', '.join(missing)}, e.g. "
            f"dict(type={clip_type!r}, {missing[0]}=1.0); it has {clip_grad!r}"
        )
    return function, grad_name, kwargs


def parameters_with_grad(param_groups: Iterable[Mapping[str, Any]]) -> list[torch.Tensor]:
    """The trainable parameters of ``param_groups`` that have a gradient to clip."""
    return [
        param
        for group in param_groups
        for param in group["params"]
        if param.requires_grad and param.grad is not None
    ]
