"""treadle.runner.optim.optimizer: optimizer wrappers, the optimizers registered by name, the
constructors that turn a config and a model into an optimizer wrapper, and build_optim_wrapper.
"""

from ...utils.lazy import lazy_attributes
from .amp_optimizer_wrapper import AmpOptimWrapper
from .amp_overflow import LossScaleCollapseError
from .apex_optimizer_wrapper import ApexOptimWrapper
from .base import BaseOptimWrapper
from .builder import OPTIM_WRAPPER_CONSTRUCTORS, OPTIMIZERS, build_optim_wrapper
from .default_constructor import DefaultOptimWrapperConstructor
from .optimizer_wrapper import OptimWrapper
from .optimizer_wrapper_dict import OptimWrapperDict

__all__ = [
    "OPTIMIZERS",
    "OPTIM_WRAPPER_CONSTRUCTORS",
    "AmpOptimWrapper",
    "ApexOptimWrapper",
    "BaseOptimWrapper",
    "DefaultOptimWrapperConstructor",
    "LossScaleCollapseError",
    "OptimWrapper",
    "OptimWrapperDict",
    "ZeroRedundancyOptimizer",
    "build_optim_wrapper",
]


# ZeroRedundancyOptimizer imports torch.distributed.optim (about half a second): it is loaded on
# first access.
__getattr__ = lazy_attributes(__name__, {"ZeroRedundancyOptimizer": ".zero_optimizer"})
