"""treadle.runner.strategies: how model and optimizer are placed, synchronized and saved.

``SingleDeviceStrategy`` trains on one device, or on one device per process with
MMDistributedDataParallel when a process group exists; it is registered in STRATEGIES, so
``STRATEGIES.build(dict(type='SingleDeviceStrategy'))`` works with nothing imported first.

Example:
    >>> from treadle.runner.strategies import SingleDeviceStrategy
    >>> strategy = SingleDeviceStrategy()
    >>> model, optim_wrapper = strategy.prepare(model, optim_wrapper=optim_wrapper)
"""

from __future__ import annotations

from .base import BaseStrategy
from .colossalai import ColossalAIStrategy
from .ddp import DDPStrategy
from .deepspeed import DeepSpeedStrategy
from .fsdp import FSDPStrategy
from .meta_tensor_context import MetaTensorContext
from .single_device import SingleDeviceStrategy

__all__ = [
    "BaseStrategy",
    "ColossalAIStrategy",
    "DDPStrategy",
    "DeepSpeedStrategy",
    "FSDPStrategy",
    "MetaTensorContext",
    "SingleDeviceStrategy",
]
