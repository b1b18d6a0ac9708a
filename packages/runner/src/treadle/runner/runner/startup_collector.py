"""The garbage collector while a Runner starts: paused, then given back as the caller had it.

Building a Runner and preparing a training import and allocate a few hundred thousand objects
that live as long as the run: torch's optimizer imports ``torch._dynamo`` (with part of the
compiler) when the first one is built, data sets are read, hooks and loops are made. CPython's
cyclic collector walks every object of the process at each full collection, and those
allocations set off several: a quarter of a second on the way to the first step of a small
training, more than the Runner's own work (issue 42). None of those objects is garbage.

So ``Runner.__init__`` and the preparation in ``Runner.train()`` (everything before the train
loop runs) are each a :class:`StartupCollectorPause`: automatic collection is off during it, if
it was on. At its end the objects it allocated are moved to the oldest generation without being
walked (``gc.freeze()`` then ``gc.unfreeze()``: both only splice lists), where a full collection
still finds any garbage among them, and the collector is on again. What the caller observes
afterwards is what it had: ``gc.isenabled()``, the thresholds (never touched) and the frozen
objects (none is left frozen; where the caller had frozen some, as the ``treadle`` command does,
the new objects are left where they are rather than frozen or unfreezing the caller's).

Inside the window, hooks' ``before_run`` and the model's code see ``gc.isenabled()`` False;
``gc.collect()`` works as always. A process forked inside it (DataLoader workers of an
iteration-based loop start when the loop is built) ends the window in the child at once, so
workers collect as usual. A window started while collection is already off (the ``treadle``
command's own start-up, a caller that turned it off, a Runner built inside another's window)
does nothing.
"""

from __future__ import annotations

import functools
import gc
import os
from collections.abc import Callable
from typing import Any, TypeVar

_Function = TypeVar("_Function", bound=Callable[..., Any])

# The window in progress in this process, if any (a child process ends it: _end_in_child).
_open: StartupCollectorPause | None = None


class StartupCollectorPause:
    """A window of a Runner's start-up with automatic garbage collection off (see the module's
    docstring); a context manager, or :meth:`start` and :meth:`end` (both safe to repeat).

    Example:
        >>> import gc
        >>> with StartupCollectorPause():
        ...     gc.isenabled()
        False
        >>> gc.isenabled()
        True
    """

    def __init__(self) -> None:
        self.active = False

    def start(self) -> StartupCollectorPause:
        """Turn automatic collection off, if it is on; returns ``self``."""
        global _open
        if self.active or not gc.isenabled():
            return self
        gc.disable()
        self.active = True
        _open = self
        return self

    def end(self) -> None:
        """Give the collector back: the window's objects moved to the oldest generation (where
        the caller froze nothing), automatic collection on."""
        global _open
        if not self.active:
            return
        self.active = False
        if _open is self:
            _open = None
        if gc.isenabled():  # turned on inside the window (gc.enable() in user code): keep it
            return
        if gc.get_freeze_count() == 0:
            # Out of the young generations without a walk over them: otherwise the next
            # collections walk them twice more and the promotion sets off a full collection.
            # (Where objects are frozen, the caller's or a hook's, unfreeze would thaw them.)
            gc.freeze()
            gc.unfreeze()
        gc.enable()

    def __enter__(self) -> StartupCollectorPause:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.end()


def paused_collector(function: _Function) -> _Function:
    """``function`` run as a :class:`StartupCollectorPause` (``Runner.__init__``).

    Example:
        >>> import gc
        >>> @paused_collector
        ... def build():
        ...     return gc.isenabled()
        >>> build(), gc.isenabled()
        (False, True)
    """

    @functools.wraps(function)
    def paused(*args: Any, **kwargs: Any) -> Any:
        with StartupCollectorPause():
            return function(*args, **kwargs)

    return paused  # type: ignore[return-value]


def _end_in_child() -> None:
    # A forked child (a DataLoader worker) collects as usual from its start.
    if _open is not None:
        _open.end()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_end_in_child)
