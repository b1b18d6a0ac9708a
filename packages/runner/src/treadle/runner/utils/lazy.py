"""Attributes of a package that are imported on first access (PEP 562 ``__getattr__``)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, sources: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports each name of ``sources`` from its module (relative
    to ``package``, or absolute) the first time it is asked for: for names whose module is
    costly to import (FSDP, ZeRO) or belongs to a package only some users need.

    Example:
        >>> __getattr__ = lazy_attributes('treadle.runner.model', {
        ...     'MMFullyShardedDataParallel': '.wrappers.fully_sharded'})
        >>> __getattr__('MMFullyShardedDataParallel').__name__
        'MMFullyShardedDataParallel'
    """

    def __getattr__(name: str) -> Any:
        source = sources.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(source, package), name)

    return __getattr__
