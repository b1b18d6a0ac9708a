"""The garbage collector while a ``treadle`` command starts.

Starting a training imports torch, treadle and the project's modules: a few hundred thousand
objects that live as long as the process and are never garbage. CPython's cyclic collector
still walks all of them at every full collection, and imports allocate enough to trigger
several: a second or more of the way to the first iteration on a loaded 2-core machine (torch's
own optimizer imports ``torch._dynamo`` at the first step, which triggers two more).

So when the command owns its process (it was started as ``treadle`` or
``python -m treadle.runner``, not called from Python code), automatic collection is paused from
the start until the Runner is built, and what exists then is frozen (``gc.freeze``: moved where
collections never look again) before collection resumes. ``treadle train`` first imports
``torch._dynamo`` too (:data:`TRAINING_IMPORTS`): torch's optimizer imports it anyway when the
first one is built, a second of imports that would otherwise run with the collector on. The
training and its data loaders (forked workers included) run with the collector on as usual; the
few thousand cyclic objects that start-up leaves behind stay allocated.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Sequence

# What a training imports in any case before its first step, whatever the config: torch's
# ``Optimizer.add_param_group`` is wrapped by ``torch._disable_dynamo``, which imports
# ``torch._dynamo`` (and with it FSDP and part of the compiler) when the first optimizer is built.
TRAINING_IMPORTS = ("torch._dynamo",)

_paused = False


def pause() -> None:
    """Stop automatic collections until :func:`resume` (only if they are on now)."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def resume(imports: Sequence[str] = ()) -> None:
    """If :func:`pause` stopped collections: import ``imports`` (modules the process is about to
    import anyway), freeze every object allocated so far, then collect automatically again.
    Does nothing otherwise, so calling it twice is harmless."""
    global _paused
    if _paused:
        for module in imports:
            importlib.import_module(module)
        gc.freeze()
        gc.enable()
        _paused = False
