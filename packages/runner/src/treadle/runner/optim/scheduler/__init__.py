"""Parameter schedulers (MMEngine 0.10's ``mmengine.optim.scheduler``): learning rate, momentum
or any other param-group value, stepped per epoch or per iteration, chainable on one optimizer.

Every family has a generic form (``StepParamScheduler(optimizer, 'weight_decay', ...)``), a
learning-rate form (``StepLR``) and a momentum form (``StepMomentum``; OneCycle has no
momentum form), all registered in ``PARAM_SCHEDULERS``.
"""

from __future__ import annotations

from .base import INF, _ParamScheduler
from .loop_check import check_schedulers_match_loop
from .lr_scheduler import (
    ConstantLR,
    CosineAnnealingLR,
    CosineRestartLR,
    ExponentialLR,
    LinearLR,
    LRSchedulerMixin,
    MultiStepLR,
    OneCycleLR,
    PolyLR,
    ReduceOnPlateauLR,
    StepLR,
)
from .momentum_scheduler import (
    ConstantMomentum,
    CosineAnnealingMomentum,
    CosineRestartMomentum,
    ExponentialMomentum,
    LinearMomentum,
    MomentumSchedulerMixin,
    MultiStepMomentum,
    PolyMomentum,
    ReduceOnPlateauMomentum,
    StepMomentum,
)
from .param_scheduler import (
    ConstantParamScheduler,
    CosineAnnealingParamScheduler,
    CosineRestartParamScheduler,
    ExponentialParamScheduler,
    LinearParamScheduler,
    MultiStepParamScheduler,
    OneCycleParamScheduler,
    PolyParamScheduler,
    ReduceOnPlateauParamScheduler,
    StepParamScheduler,
)

__all__ = [
    "INF",
    "ConstantLR",
    "ConstantMomentum",
    "ConstantParamScheduler",
    "CosineAnnealingLR",
    "CosineAnnealingMomentum",
    "CosineAnnealingParamScheduler",
    "CosineRestartLR",
    "CosineRestartMomentum",
    "CosineRestartParamScheduler",
    "ExponentialLR",
    "ExponentialMomentum",
    "ExponentialParamScheduler",
    "LRSchedulerMixin",
    "LinearLR",
    "LinearMomentum",
    "LinearParamScheduler",
    "MomentumSchedulerMixin",
    "MultiStepLR",
    "MultiStepMomentum",
    "MultiStepParamScheduler",
    "OneCycleLR",
    "OneCycleParamScheduler",
    "PolyLR",
    "PolyMomentum",
    "PolyParamScheduler",
    "ReduceOnPlateauLR",
    "ReduceOnPlateauMomentum",
    "ReduceOnPlateauParamScheduler",
    "StepLR",
    "StepMomentum",
    "StepParamScheduler",
    "_ParamScheduler",
    "check_schedulers_match_loop",
]
