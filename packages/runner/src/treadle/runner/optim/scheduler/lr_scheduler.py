"""The learning-rate schedulers under MMEngine's module name
(``mmengine.optim.scheduler.lr_scheduler``); each lives in the file of its family."""

from __future__ import annotations

from .constant import ConstantLR
from .cosine_annealing import CosineAnnealingLR
from .cosine_restart import CosineRestartLR
from .exponential import ExponentialLR
from .linear import LinearLR
from .mixins import LRSchedulerMixin
from .multi_step import MultiStepLR
from .one_cycle import OneCycleLR
from .poly import PolyLR
from .reduce_on_plateau import ReduceOnPlateauLR
from .step import StepLR

__all__ = [
    "ConstantLR",
    "CosineAnnealingLR",
    "CosineRestartLR",
    "ExponentialLR",
    "LRSchedulerMixin",
    "LinearLR",
    "MultiStepLR",
    "OneCycleLR",
    "PolyLR",
    "ReduceOnPlateauLR",
    "StepLR",
]
