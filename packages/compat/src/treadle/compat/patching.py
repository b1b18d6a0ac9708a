"""``mock.patch('mmengine.X.Y.name')`` reaches the treadle code behind ``mmengine.X.Y``.

Downstream test suites patch module globals at MMEngine's paths (``get_dist_info`` of
``mmengine.dataset.sampler``, ``time`` of ``mmengine.hooks.iter_timer_hook``...). An MMEngine
module path here is a :class:`~treadle.compat.finder.CompatModule`, and the code that runs is
treadle's, in other modules: setting a name on the path sets it, too, in the globals of each
treadle module that implements the path and holds that name (its *implementers*: the modules
of the classes and functions MMEngine defines at the path). Deleting the name, or setting the
value the path had before, puts treadle's own values back.

Where treadle's code reads the name differently from MMEngine's, an adapter translates the
patched value (MMEngine's IterTimerHook reads ``time.time()``, treadle's ``time.perf_counter()``).
"""

from __future__ import annotations

import importlib
import time
import types
from functools import cache
from typing import Any

from .mmengine_0_10_7 import MODULES
from .mmengine_0_10_7_globals import GLOBALS

#: Extra implementers, where treadle's code for a path lives beside its classes' modules.
EXTRA_IMPLEMENTERS: dict[str, tuple[str, ...]] = {
    "mmengine.hooks.iter_timer_hook": ("treadle.runner.hooks.iter_timer_pauses",),
}


class WallClockAsPerfCounter:
    """A patched ``time`` module as treadle's timers read it: ``perf_counter()`` answers what the
    patched ``time()`` does (MMEngine's timing code, and the tests that patch it, use ``time()``).

    Example:
        >>> from unittest import mock
        >>> fake = mock.Mock(); fake.time.return_value = 5.0
        >>> WallClockAsPerfCounter(fake).perf_counter()
        5.0
    """

    def __init__(self, patched: Any) -> None:
        self._patched = patched

    def perf_counter(self) -> Any:
        return self._patched.time()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._patched, name)


def _time_adapter(value: Any) -> Any:
    return value if value is time else WallClockAsPerfCounter(value)


#: ``(MMEngine module, name) -> how a patched value is handed to treadle's code``.
ADAPTERS: dict[tuple[str, str], Any] = {
    ("mmengine.hooks.iter_timer_hook", "time"): _time_adapter,
}

# (MMEngine module, name) -> (the value the path had, [(treadle module, its own value)]).
_Saved = tuple[Any, list[tuple[types.ModuleType, Any]]]
_ORIGINALS: dict[tuple[str, str], _Saved] = {}
#: What a lookup gives for a name that is nowhere (resolve uses it too).
NOT_FOUND = object()


def mmengine_has(module: str, name: str) -> bool:
    """Whether MMEngine 0.10.7's ``module`` has ``name`` at module level (defined or imported).

    Example:
        >>> mmengine_has('mmengine.dataset.sampler', 'get_dist_info')
        True
    """
    return name in GLOBALS.get(module, {})


@cache
def implementers(module: str) -> tuple[types.ModuleType, ...]:
    """The treadle modules whose code stands behind MMEngine's ``module``."""
    from .resolve import find

    public = set(MODULES.get(module, (False, ()))[1])
    found: list[types.ModuleType] = []
    for name, origin in GLOBALS.get(module, {}).items():
        # Public names only: looking up a private one asks for the implementers again.
        if origin != "def" or name not in public:
            continue
        try:
            value = find(module, name)
        except ImportError:  # an optional dependency behind the name
            continue
        home = getattr(value, "__module__", None)
        if isinstance(home, str) and home.startswith("treadle."):
            target = importlib.import_module(home)
            if target not in found:
                found.append(target)
    found += [importlib.import_module(extra) for extra in EXTRA_IMPLEMENTERS.get(module, ())]
    return tuple(found)


def module_global(module: str, name: str) -> Any:
    """The value of MMEngine's module-level ``name`` of ``module`` here, or a sentinel: the
    module it imported (when installed), else what treadle's implementing code holds under that
    name, else the object MMEngine imported (treadle's at an ``mmengine`` path)."""
    origin = GLOBALS.get(module, {}).get(name)
    if origin is None:
        return NOT_FOUND
    if origin.startswith("import:"):
        try:
            return importlib.import_module(origin.removeprefix("import:"))
        except ImportError:  # an optional module (cv2): treadle's slot for it, if any
            pass
    for target in implementers(module):
        if name in vars(target):
            return vars(target)[name]
    if origin.startswith("from:"):
        home, _, attr = origin.removeprefix("from:").partition(":")
        if home.startswith("mmengine."):
            from .resolve import find

            return find(home, attr)
        try:
            return getattr(importlib.import_module(home), attr, NOT_FOUND)
        except ImportError:
            return NOT_FOUND
    return NOT_FOUND


def forward_set(module: str, name: str, value: Any, current: Any) -> None:
    """``setattr`` of ``name`` on the MMEngine path ``module``, whose value was ``current``
    (the sentinel when never looked up): set it in the implementing treadle modules too."""
    if not mmengine_has(module, name):
        return
    key = (module, name)
    if key not in _ORIGINALS:
        targets = [(t, vars(t)[name]) for t in implementers(module) if name in vars(t)]
        if not targets:
            return
        if current is NOT_FOUND:
            from .resolve import find

            current = find(module, name)
        _ORIGINALS[key] = (current, targets)
    path_original, targets = _ORIGINALS[key]
    if value is path_original:  # mock.patch putting the path's value back
        forward_restore(module, name)
        return
    adapt = ADAPTERS.get(key)
    for target, _ in targets:
        setattr(target, name, adapt(value) if adapt else value)


def forward_restore(module: str, name: str) -> None:
    """Put treadle's own values of ``name`` back in the modules behind ``module``."""
    saved = _ORIGINALS.pop((module, name), None)
    if saved is not None:
        for target, original in saved[1]:
            setattr(target, name, original)
