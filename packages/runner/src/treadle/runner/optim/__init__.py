"""treadle.runner.optim: optimizer wrappers (AMP, accumulation, clipping), optimizers and their
constructors (paramwise settings), parameter schedulers.

The API follows MMEngine 0.10's ``mmengine.optim``: ``from mmengine.optim import OptimWrapper``
becomes ``from treadle.runner.optim import OptimWrapper``. Importing this package registers the
built-in optimizers, wrappers, constructors and schedulers in treadle.runner.registry.
"""

from ..utils.lazy import lazy_attributes
from .optimizer import (
    OPTIM_WRAPPER_CONSTRUCTORS,
    OPTIMIZERS,
    AmpOptimWrapper,
    ApexOptimWrapper,
    BaseOptimWrapper,
    DefaultOptimWrapperConstructor,
    LossScaleCollapseError,
    OptimWrapper,
    OptimWrapperDict,
    build_optim_wrapper,
)
from .scheduler import (
    ConstantLR,
    ConstantMomentum,
    ConstantParamScheduler,
    CosineAnnealingLR,
    CosineAnnealingMomentum,
    CosineAnnealingParamScheduler,
    CosineRestartLR,
    CosineRestartMomentum,
    CosineRestartParamScheduler,
    ExponentialLR,
    ExponentialMomentum,
    ExponentialParamScheduler,
    LinearLR,
    LinearMomentum,
    LinearParamScheduler,
    MultiStepLR,
    MultiStepMomentum,
    MultiStepParamScheduler,
    OneCycleLR,
    OneCycleParamScheduler,
    PolyLR,
    PolyMomentum,
    PolyParamScheduler,
    ReduceOnPlateauLR,
    ReduceOnPlateauMomentum,
    ReduceOnPlateauParamScheduler,
    StepLR,
    StepMomentum,
    StepParamScheduler,
    _ParamScheduler,
    check_schedulers_match_loop,
)

__all__ = [
    "OPTIMIZERS",
    "OPTIM_WRAPPER_CONSTRUCTORS",
    "AmpOptimWrapper",
    "ApexOptimWrapper",
    "BaseOptimWrapper",
    "ConstantLR",
    "ConstantMomentum",
    "ConstantParamScheduler",
    "CosineAnnealingLR",
    "CosineAnnealingMomentum",
    "CosineAnnealingParamScheduler",
    "CosineRestartLR",
    "CosineRestartMomentum",
    "CosineRestartParamScheduler",
    "DefaultOptimWrapperConstructor",
    "ExponentialLR",
    "ExponentialMomentum",
    "ExponentialParamScheduler",
    "LinearLR",
    "LinearMomentum",
    "LinearParamScheduler",
    "LossScaleCollapseError",
    "MultiStepLR",
    "MultiStepMomentum",
    "MultiStepParamScheduler",
    "OneCycleLR",
    "OneCycleParamScheduler",
    "OptimWrapper",
    "OptimWrapperDict",
    "PolyLR",
    "PolyMomentum",
    "PolyParamScheduler",
    "ReduceOnPlateauLR",
    "ReduceOnPlateauMomentum",
    "ReduceOnPlateauParamScheduler",
    "StepLR",
    "StepMomentum",
    "StepParamScheduler",
    "ZeroRedundancyOptimizer",
    "_ParamScheduler",
    "build_optim_wrapper",
    "check_schedulers_match_loop",
]


# ZeroRedundancyOptimizer imports torch.distributed.optim (about half a second): it is loaded on
# first access.
__getattr__ = lazy_attributes(__name__, {"ZeroRedundancyOptimizer": ".optimizer.zero_optimizer"})
