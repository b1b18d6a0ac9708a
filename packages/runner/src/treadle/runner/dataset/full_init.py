"""``force_full_init``: methods that need the data list initialize the dataset first.

A dataset built with ``lazy_init=True`` holds no data list until ``full_init()`` runs; every
method that reads the list is decorated, so a user who forgot to call it gets a working dataset
(and a warning, because loading on first access in each DataLoader worker is slow).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from treadle.logging import print_log

_Method = TypeVar("_Method", bound=Callable[..., Any])


def force_full_init(method: _Method) -> _Method:
    """Decorate a dataset method so that ``full_init()`` runs before it when it has not yet.

    Example:
        >>> class Squares:
        ...     _fully_initialized = False
        ...     def full_init(self):
        ...         self.items = [i * i for i in range(4)]
        ...     @force_full_init
        ...     def __len__(self):
        ...         return len(self.items)
        >>> len(Squares())
        4
    """

    @functools.wraps(method)
    def wrapper(obj: Any, *args: Any, **kwargs: Any) -> Any:
        if not getattr(obj, "_fully_initialized", False):
            if not hasattr(obj, "full_init"):
                raise AttributeError(
                    f"{type(obj).__qualname__}.{method.__name__} is decorated with "
                    "force_full_init, but the object has no full_init method"
                )
            print_log(
                f"{type(obj).__qualname__} was not fully initialized before "
                f"{method.__name__} was called; calling full_init() now (call it yourself "
                "once, before building the DataLoader, so that workers do not repeat it)",
                logger="current",
                level=logging.WARNING,
            )
            obj.full_init()
            obj._fully_initialized = True
        return method(obj, *args, **kwargs)

    return wrapper  # type: ignore[return-value]
