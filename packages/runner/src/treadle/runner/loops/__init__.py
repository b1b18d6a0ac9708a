"""treadle.runner.loops: the train, val and test loops (MMEngine 0.10's, in ``mmengine.runner``).

Importing this package registers EpochBasedTrainLoop, IterBasedTrainLoop, ValLoop and TestLoop
in LOOPS; the registry lists it in its ``locations``, so ``train_cfg=dict(type=...)`` works
without importing it first. The train loops resume exactly: see ``train_loop``.
"""

from __future__ import annotations

from .base_loop import BaseLoop
from .dynamic_intervals import calc_dynamic_intervals
from .epoch_based_loop import EpochBasedTrainLoop
from .eval_loop import TestLoop, ValLoop
from .iter_based_loop import IterBasedTrainLoop
from .nonfinite import NonFiniteLossError
from .rng_state import capture_rng_state, restore_rng_state

__all__ = [
    "BaseLoop",
    "EpochBasedTrainLoop",
    "IterBasedTrainLoop",
    "NonFiniteLossError",
    "TestLoop",
    "ValLoop",
    "calc_dynamic_intervals",
    "capture_rng_state",
    "restore_rng_state",
]
