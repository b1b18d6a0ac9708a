"""Which submodules of a model become FSDP2 units, chosen the way FSDP1's auto-wrap policies
choose them.

An FSDP1 policy is a callable ``policy(module=, recurse=, nonwrapped_numel=)``: asked with
``recurse=True`` whether to look inside a module, and with ``recurse=False`` whether the module
itself (with the parameters its chosen descendants did not take) is a unit. FSDP1 wraps the
chosen modules in place; FSDP2 calls ``fully_shard`` on them, children first, so we only need the
list. A policy may also be a list of module class names (or classes): every module of those
classes is a unit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from torch import nn

from treadle.registry.suggestions import close_matches

# Keyword arguments of torch's policies that hold module classes, which configs write by name.
_CLASS_ARGUMENTS = (
    "transformer_layer_cls",
    "module_classes",
    "force_leaf_modules",
    "exclude_wrap_modules",
)


def _classes_by_name(model: nn.Module, names: Iterable[Any], argument: str) -> set[type]:
    found = {type(module).__name__: type(module) for module in model.modules()}
    classes = set()
    for name in names:
        if isinstance(name, type):
            classes.add(name)
            continue
        if name not in found:
            close = close_matches(str(name), found)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise KeyError(
                f"MMFullyShardedDataParallel: auto_wrap_policy {argument} names {name!r}, which "
                f"is not the class of any module of the model{hint}"
            )
        classes.add(found[name])
    return classes


def _with_classes(model: nn.Module, policy: Callable) -> Callable:
    """``policy`` with module class names in its bound arguments replaced by the classes."""
    if not isinstance(policy, partial):
        return policy
    keywords: dict[str, Any] = dict(policy.keywords)
    for argument in _CLASS_ARGUMENTS:
        value = keywords.get(argument)
        if isinstance(value, (list, tuple, set)) and any(isinstance(v, str) for v in value):
            keywords[argument] = _classes_by_name(model, value, argument)
        elif isinstance(value, str):
            keywords[argument] = _classes_by_name(model, [value], argument)
    if isinstance(policy.func, type):
        return policy.func(*policy.args, **keywords)  # ModuleWrapPolicy(module_classes=...)
    return partial(policy.func, *policy.args, **keywords)


def _numel(module: nn.Module, skip: set[nn.Parameter]) -> int:
    return sum(p.numel() for p in module.parameters() if p not in skip)


def units_to_shard(model: nn.Module, policy: Any, ignored: set[nn.Parameter]) -> list[nn.Module]:
    """The submodules of ``model`` (never ``model`` itself) that ``policy`` makes units,
    each after its own chosen descendants: the order to call ``fully_shard`` in."""
    if policy is None:
        return []
    if isinstance(policy, (list, tuple, set)):
        classes = tuple(_classes_by_name(model, policy, "class list"))
        return [
            module
            for module in reversed(list(model.modules()))
            if module is not model and isinstance(module, classes)
        ]
    policy = _with_classes(model, policy)
    units: list[nn.Module] = []
    taken: set[nn.Parameter] = set(ignored)

    def visit(module: nn.Module) -> None:
        # Mirrors FSDP1's recursion: look inside when asked to, then decide about the module
        # with what its descendants left.
        for child in module.children():
            if not policy(module=child, recurse=True, nonwrapped_numel=_numel(child, taken)):
                continue
            visit(child)
            remaining = _numel(child, taken)
            if policy(module=child, recurse=False, nonwrapped_numel=remaining):
                units.append(child)
                taken.update(child.parameters())

    if policy(module=model, recurse=True, nonwrapped_numel=_numel(model, taken)):
        visit(model)
    return units


def describe_units(units: Iterable[nn.Module], model: nn.Module) -> Mapping[str, str]:
    """``{submodule name: class name}`` of the units (for logs and tests)."""
    names = {id(module): name for name, module in model.named_modules()}
    return {names.get(id(unit), "?") or "<root>": type(unit).__name__ for unit in units}
