"""Activation checkpointing: chosen submodules recompute their activations in the backward pass
instead of keeping them, trading compute for memory.

Every strategy offers it (``BaseStrategy.apply_activation_checkpointing``): the Runner's
``cfg.activation_checkpointing`` and FSDPStrategy's ``activation_checkpointing=`` both end here.
The recomputation uses ``torch.utils.checkpoint`` in its non-reentrant form, which supports
keyword arguments, inputs that need no gradient, and FSDP2's hooks.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable, Sequence
from typing import Any

from torch import nn
from torch.utils.checkpoint import checkpoint

_MARK = "__treadle_checkpointed__"


def _checkpointed(forward: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(forward)
    def run(*args: Any, **kwargs: Any) -> Any:
        return checkpoint(forward, *args, use_reentrant=False, **kwargs)

    setattr(run, _MARK, True)
    return run


def is_checkpointed(module: nn.Module) -> bool:
    """Whether ``module``'s forward recomputes its activations in backward."""
    return bool(getattr(module.forward, _MARK, False))


def checkpoint_module(module: nn.Module) -> nn.Module:
    """Make ``module`` recompute its activations in backward (once: a second call changes
    nothing); returns it."""
    if not is_checkpointed(module):
        module.forward = _checkpointed(module.forward)
    return module


def _named(model: nn.Module, name: str) -> nn.Module:
    try:
        return model.get_submodule(name)
    except AttributeError:
        known = [known for known, _ in model.named_modules() if known]
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
        raise AttributeError(
            f"activation_checkpointing names {name!r}, which is not a submodule of "
            f"{type(model).__name__}{hint}"
        ) from None


def turn_on_activation_checkpointing(model: nn.Module, modules: str | Sequence[str]) -> None:
    """Recompute the activations of ``model``'s submodules named in ``modules`` (dotted names,
    as ``model.get_submodule`` takes them) during the backward pass. Turning it on twice for a
    module changes nothing.

    Example:
        >>> model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
        >>> turn_on_activation_checkpointing(model, ['0', '2'])
    """
    names = [modules] if isinstance(modules, str) else list(modules)
    for module in [_named(model, name) for name in names]:
        checkpoint_module(module)


def _class_names(model: nn.Module) -> set[str]:
    return {type(module).__name__ for module in model.modules()}


def apply_activation_checkpointing(
    model: nn.Module,
    *,
    modules: str | Sequence[str] | None = None,
    module_classes: str | type | Sequence[str | type] | None = None,
    check_fn: Callable[[nn.Module], bool] | None = None,
) -> list[str]:
    """Checkpoint the submodules of ``model`` chosen by dotted name (``modules``), by class
    (``module_classes``: classes or class names, e.g. ``'TransformerLayer'``) or by a predicate
    (``check_fn(module) -> bool``, as torch's ``apply_activation_checkpointing``); returns the
    names of the submodules checkpointed. A class name no submodule has is an error naming the
    closest classes.

    Example:
        >>> model = nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1))
        >>> apply_activation_checkpointing(model, module_classes='Linear')
        ['0', '2']
    """
    chosen: dict[str, nn.Module] = {}
    if modules is not None:
        names = [modules] if isinstance(modules, str) else list(modules)
        chosen.update((name, _named(model, name)) for name in names)
    if module_classes is not None:
        wanted = (
            [module_classes] if isinstance(module_classes, (str, type)) else list(module_classes)
        )
        present = _class_names(model)
        for item in wanted:
            name = item if isinstance(item, str) else item.__name__
            if name not in present:
                close = difflib.get_close_matches(name, sorted(present), n=3)
                hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
                raise ValueError(
                    f"activation checkpointing: no submodule of {type(model).__name__} is a "
                    f"{name}{hint}"
                )
        names_wanted = {item if isinstance(item, str) else item.__name__ for item in wanted}
        types_wanted = tuple(item for item in wanted if isinstance(item, type))
        for name, module in model.named_modules():
            if name and (
                type(module).__name__ in names_wanted
                or (types_wanted and isinstance(module, types_wanted))
            ):
                chosen.setdefault(name, module)
    if check_fn is not None:
        if not callable(check_fn):
            raise TypeError(
                f"activation checkpointing: check_fn must be callable, got "
                f"{type(check_fn).__name__}: {check_fn!r}"
            )
        for name, module in model.named_modules():
            if name and check_fn(module):
                chosen.setdefault(name, module)
    # A checkpointed module inside another checkpointed one would be recomputed twice.
    names = sorted(chosen)
    outer = [n for n in names if not any(n.startswith(f"{o}.") for o in names if o != n)]
    for name in outer:
        checkpoint_module(chosen[name])
    return outer
