"""Import a tracker library on first use, or say which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType


def import_tracker(module: str, extra: str, needed_by: str) -> ModuleType:
    """Import ``module`` (``'wandb'``, ``'aim'``, ...) for the backend ``needed_by``.

    A missing library raises ImportError naming the extra that installs it, with the original
    error chained.

    Example:
        >>> wandb = import_tracker('wandb', 'wandb', 'WandbVisBackend')  # doctest: +SKIP
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"{needed_by} needs the {module!r} library, which could not be imported ({error}). "
            f"Install it with: pip install treadle-visual[{extra}]"
        ) from error
