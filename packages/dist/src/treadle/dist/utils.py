"""Decorators for code that only one process should run."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .info import is_main_process

_Result = TypeVar("_Result")


def master_only(func: Callable[..., _Result]) -> Callable[..., _Result | None]:
    """Run ``func`` on rank 0 of the world group only; other ranks get None without calling it.

    Example:
        >>> @master_only
        ... def save_report(path):
        ...     ...
        >>> save_report("report.json")  # written once, by rank 0
    """

    @functools.wraps(func)
    def run_on_rank_zero(*args: Any, **kwargs: Any) -> _Result | None:
        if is_main_process():
            return func(*args, **kwargs)
        return None

    return run_on_rank_zero
