"""Activation checkpointing of named submodules (``cfg.activation_checkpointing``): their
activations are recomputed in the backward pass instead of kept, trading compute for memory."""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Sequence
from typing import Any

from torch import nn
from torch.utils.checkpoint import checkpoint


def _checkpointed(forward: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(forward)
    def run(*args: Any, **kwargs: Any) -> Any:
        # The non-reentrant form supports keyword arguments and inputs without gradients.
        return checkpoint(forward, *args, use_reentrant=False, **kwargs)

    run.__treadle_checkpointed__ = True  # type: ignore[attr-defined]
    return run


def turn_on_activation_checkpointing(model: nn.Module, modules: str | Sequence[str]) -> None:
    """Recompute the activations of ``model``'s submodules named in ``modules`` (dotted names,
    as ``model.get_submodule`` takes them) during the backward pass. Turning it on twice for a
    module changes nothing.

    Example:
        >>> model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
        >>> turn_on_activation_checkpointing(model, ['0', '2'])
    """
    names = [modules] if isinstance(modules, str) else list(modules)
    for name in names:
        try:
            module = model.get_submodule(name)
        except AttributeError:
            known = [known for known, _ in model.named_modules() if known]
            close = difflib.get_close_matches(name, known, n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise AttributeError(
                f"activation_checkpointing names {name!r}, which is not a submodule of "
                f"{type(model).__name__}{hint}"
            ) from None
        if getattr(module.forward, "__treadle_checkpointed__", False):
            continue
        module.forward = _checkpointed(module.forward)
