"""``read_base()``: marks the imports of base configs in a pure-Python config."""

from __future__ import annotations

from contextlib import contextmanager

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator


@contextmanager
def read_base() -> Iterator[None]:
    """Inside ``with read_base():``, ``from .base import *`` imports a base config.

    Example (a pure-Python config)::

        from treadle.config import read_base

        with read_base():
            from .schedule import *

        optim_wrapper.optimizer.lr = 0.01
    """
    yield
