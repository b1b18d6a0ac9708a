"""Questions about classes and objects, and finding objects by dotted name."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from .errors import UtilsTypeError


def is_method_overridden(method: str, base_class: type, derived_class: type | Any) -> bool:
    """Whether ``derived_class`` (a class or an instance of one) defines ``method`` itself
    instead of inheriting ``base_class``'s.

    Example:
        >>> class Hook:
        ...     def before_run(self): ...
        >>> class MyHook(Hook):
        ...     def before_run(self): print('hi')
        >>> is_method_overridden('before_run', Hook, MyHook())
        True
    """
    if not isinstance(base_class, type):
        raise UtilsTypeError(
            f"is_method_overridden: base_class must be a class, got an instance of "
            f"{type(base_class).__name__} (the derived class may be either)"
        )
    if not isinstance(derived_class, type):
        derived_class = type(derived_class)
    if not hasattr(base_class, method):
        raise AttributeError(
            f"is_method_overridden: {base_class.__qualname__} has no method {method!r}"
        )
    return getattr(derived_class, method) is not getattr(base_class, method)


def has_method(obj: object, method: str) -> bool:
    """Whether ``obj`` has a callable attribute ``method``."""
    return callable(getattr(obj, method, None))


def apply_to(data: Any, expr: Callable[[Any], bool], apply_func: Callable[[Any], Any]) -> Any:
    """Apply ``apply_func`` to every leaf of ``data`` for which ``expr`` is true, rebuilding the
    dicts, lists and tuples (namedtuples included) around them with their own types.

    Containers are always walked into, never tested with ``expr`` themselves.

    Example:
        >>> apply_to({'a': [1, 'x'], 'b': (2,)}, lambda x: isinstance(x, int), lambda x: x * 10)
        {'a': [10, 'x'], 'b': (20,)}
    """
    if isinstance(data, dict):
        return type(data)({key: apply_to(value, expr, apply_func) for key, value in data.items()})
    if isinstance(data, tuple) and hasattr(
        data, "_fields"
    ):  # a namedtuple takes fields by position
        return type(data)(*(apply_to(item, expr, apply_func) for item in data))
    if isinstance(data, (tuple, list)):
        return type(data)(apply_to(item, expr, apply_func) for item in data)
    return apply_func(data) if expr(data) else data


def get_object_from_string(obj_name: str) -> Any:
    """The object (module, class, function, attribute) ``obj_name`` names by its dotted path,
    or None when there is none.

    Example:
        >>> get_object_from_string('os.path.join').__name__
        'join'
    """
    if not isinstance(obj_name, str) or not obj_name:
        raise ValueError(f"get_object_from_string needs a dotted name, got {obj_name!r}")
    parts = obj_name.split(".")
    # The longest prefix that imports as a module; the rest are attributes of it.
    for split in range(len(parts), 0, -1):
        module_name = ".".join(parts[:split])
        try:
            obj = importlib.import_module(module_name)
        except ImportError:
            continue
        for attribute in parts[split:]:
            obj = getattr(obj, attribute, None)
            if obj is None:
                return None
        return obj
    return None
