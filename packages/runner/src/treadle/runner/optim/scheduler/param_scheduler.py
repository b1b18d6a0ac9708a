"""The ParamSchedulers under MMEngine's module name (``mmengine.optim.scheduler.param_scheduler``);
each lives in the file of its family."""

from __future__ import annotations

from .base import INF, _ParamScheduler
from .constant import ConstantParamScheduler
from .cosine_annealing import CosineAnnealingParamScheduler
from .cosine_restart import CosineRestartParamScheduler
from .exponential import ExponentialParamScheduler
from .linear import LinearParamScheduler
from .multi_step import MultiStepParamScheduler
from .one_cycle import OneCycleParamScheduler
from .poly import PolyParamScheduler
from .reduce_on_plateau import ReduceOnPlateauParamScheduler
from .step import StepParamScheduler

__all__ = [
    "INF",
    "ConstantParamScheduler",
    "CosineAnnealingParamScheduler",
    "CosineRestartParamScheduler",
    "ExponentialParamScheduler",
    "LinearParamScheduler",
    "MultiStepParamScheduler",
    "OneCycleParamScheduler",
    "PolyParamScheduler",
    "ReduceOnPlateauParamScheduler",
    "StepParamScheduler",
    "_ParamScheduler",
]
