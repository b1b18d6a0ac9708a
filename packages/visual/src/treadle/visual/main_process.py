"""Which process writes: rank 0 only, without importing torch in a process that has not.

Backends and the Visualizer's ``add_*`` methods write from the main process only, as
``treadle.dist.master_only`` does. ``treadle.dist`` imports torch, though, and a process that
only draws or plots should not pay for that. Without torch imported no process group can exist,
so such a process is the main one.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

_Function = TypeVar("_Function", bound=Callable[..., Any])


def is_main_process() -> bool:
    """True on rank 0 of the default process group, and in a process without one."""
    if "torch" not in sys.modules:
        return True
    from treadle.dist import is_main_process as rank_zero

    return rank_zero()


def master_only(function: _Function) -> _Function:
    """Call ``function`` on the main process only; other ranks get None.

    Example:
        >>> @master_only
        ... def save(path):
        ...     return path
        >>> save('scalars.json')
        'scalars.json'
    """

    @functools.wraps(function)
    def on_main_process(*args: Any, **kwargs: Any) -> Any:
        if not is_main_process():
            return None
        return function(*args, **kwargs)

    return on_main_process  # type: ignore[return-value]
