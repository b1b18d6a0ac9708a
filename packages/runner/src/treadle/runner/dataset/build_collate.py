"""``build_collate_fn``: the collate function a DataLoader config names."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from treadle.registry.suggestions import missing_type_message
from treadle.runner.registry import FUNCTIONS


def build_collate_fn(cfg: str | Mapping[str, Any] | Callable | None = None) -> Callable:
    """The collate function of ``cfg``: a registered name, a dict whose ``type`` is a
    registered name or a function (its other keys are bound with ``functools.partial``), or a
    function. None gives ``pseudo_collate``, the Runner's default.

    Example:
        >>> build_collate_fn('default_collate')
        <function default_collate at ...>
        >>> build_collate_fn(dict(type='pseudo_collate'))([(1, 'a'), (2, 'b')])
        [[1, 2], ['a', 'b']]
    """
    if cfg is None:
        cfg = "pseudo_collate"
    if isinstance(cfg, str):
        return _registered(cfg)
    if isinstance(cfg, Mapping):
        args = dict(cfg)
        if "type" not in args:
            raise KeyError(f"the collate_fn config {dict(cfg)!r} has no 'type' key")
        function = args.pop("type")
        function = _registered(function) if isinstance(function, str) else function
        if not callable(function):
            raise TypeError(f"collate_fn type must be a name or a function, got {function!r}")
        return functools.partial(function, **args) if args else function
    if callable(cfg):
        return cfg
    raise TypeError(
        f"collate_fn must be a registered name, a config dict or a function, got "
        f"{type(cfg).__name__}: {cfg!r}"
    )


def _registered(name: str) -> Callable:
    function = FUNCTIONS.get(name)
    if function is None:
        raise KeyError(missing_type_message(FUNCTIONS, name))
    return function
