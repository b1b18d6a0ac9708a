"""The momentum schedulers under MMEngine's module name
(``mmengine.optim.scheduler.momentum_scheduler``); each lives in the file of its family."""

from __future__ import annotations

from .constant import ConstantMomentum
from .cosine_annealing import CosineAnnealingMomentum
from .cosine_restart import CosineRestartMomentum
from .exponential import ExponentialMomentum
from .linear import LinearMomentum
from .mixins import MomentumSchedulerMixin
from .multi_step import MultiStepMomentum
from .poly import PolyMomentum
from .reduce_on_plateau import ReduceOnPlateauMomentum
from .step import StepMomentum

__all__ = [
    "ConstantMomentum",
    "CosineAnnealingMomentum",
    "CosineRestartMomentum",
    "ExponentialMomentum",
    "LinearMomentum",
    "MomentumSchedulerMixin",
    "MultiStepMomentum",
    "PolyMomentum",
    "ReduceOnPlateauMomentum",
    "StepMomentum",
]
