"""The values of a pure-Python config: made into ConfigDicts once, and copied for each load that
reuses them.

Both walk every value of a config, once or twice per load, so they are written for speed: a
ConfigDict is made with ``dict.__new__`` and filled from a dict built in one comprehension
(``ConfigDict()`` runs Python code per key), and values that nobody changes in place are shared
instead of copied.
"""

from __future__ import annotations

import types

from .config_dict import ConfigDict
from .lazy import LazyAttr, LazyObject

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection
    from typing import Any

_new = dict.__new__
_fill = dict.update
_items = dict.items

# Values a load may share with the next: immutable ones, classes and functions (which
# ``copy.deepcopy`` shares too), and lazy imports (nothing changes a LazyObject once made; a
# config reading one gets the object it names, built anew on each read).
_SHARED = frozenset(
    (
        str, int, float, bool, complex, bytes, type(None), type, range,
        types.FunctionType, types.BuiltinFunctionType, LazyObject, LazyAttr,
    )
)  # fmt: skip
_CONTAINERS = (dict, list, tuple)


def to_config_dicts(values: dict[str, Any], kept: Collection[str] = ()) -> ConfigDict:
    """``values`` with every dict in it a ConfigDict, each object once; the values of the keys
    in ``kept`` are a base's kept values, taken as they are.

    The ConfigDicts of bases (made by this same load) are taken over, not copied: only plain
    dicts are converted, and lists and tuples rebuilt (a list may come from anywhere, even a
    module, and user code may have put plain dicts in it). A ConfigDict found twice (``b = a``
    in a config) is copied the second time, so no two keys share one dict.

    Example:
        >>> cfg = to_config_dicts({'model': {'layers': [{'n': 1}]}})
        >>> type(cfg.model).__name__, type(cfg.model.layers[0]).__name__
        ('ConfigDict', 'ConfigDict')
    """
    seen: set[int] = set()
    converted = _new(ConfigDict)
    _fill(
        converted,
        {k: v if k in kept else _adopt(v, seen) for k, v in values.items()},
    )
    return converted


def _adopt(value: Any, seen: set[int]) -> Any:
    kind = type(value)
    if kind in _SHARED:
        return value
    if kind is ConfigDict:
        if id(value) in seen:
            return _adopt(dict(_items(value)), seen)
        seen.add(id(value))
        for key, item in _items(value):
            if type(item) not in _SHARED and isinstance(item, _CONTAINERS):
                new = _adopt(item, seen)
                if new is not item:
                    dict.__setitem__(value, key, new)
        return value
    if kind is list:
        return [v if type(v) in _SHARED else _adopt(v, seen) for v in value]
    if kind is tuple:
        return tuple([v if type(v) in _SHARED else _adopt(v, seen) for v in value])
    if isinstance(value, dict):
        adopted = _new(ConfigDict)
        _fill(adopted, {k: _adopt(v, seen) for k, v in _items(value)})
        return adopted
    if isinstance(value, list):
        return [_adopt(v, seen) for v in value]
    return value


def thaw_keys(values: ConfigDict, keys: Collection[str]) -> ConfigDict:
    """A ConfigDict of kept ``values`` where those of ``keys`` are thawed, the others shared."""
    copied = _new(ConfigDict)
    _fill(copied, {k: thaw(v) if k in keys else v for k, v in _items(values)})
    return copied


def thaw(value: Any) -> Any:
    """A copy of kept values that can be changed without changing them: containers copied,
    values that nobody changes in place shared.

    Example:
        >>> kept = to_config_dicts({'model': {'layers': [1, 2]}})
        >>> copy = thaw(kept)
        >>> copy.model.layers.append(3)
        >>> kept.model.layers
        [1, 2]
    """
    kind = type(value)
    if kind is ConfigDict:
        copied = _new(ConfigDict)
        _fill(copied, {k: v if type(v) in _SHARED else thaw(v) for k, v in _items(value)})
        return copied
    if kind is list:
        return [v if type(v) in _SHARED else thaw(v) for v in value]
    if kind is tuple:
        return tuple([v if type(v) in _SHARED else thaw(v) for v in value])
    if kind in _SHARED:
        return value
    import copy

    return copy.deepcopy(value)
