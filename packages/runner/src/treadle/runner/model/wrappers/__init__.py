"""Model wrappers: the distributed containers (DDP, separate DDP, FSDP) with the train, val
and test steps the runner's loops call, and ``is_model_wrapper``."""

from __future__ import annotations

from ...utils.lazy import lazy_attributes
from .distributed import MMDistributedDataParallel
from .separate_distributed import MMSeparateDistributedDataParallel
from .utils import is_model_wrapper, unwrap_model

__all__ = [
    "MMDistributedDataParallel",
    "MMFullyShardedDataParallel",
    "MMSeparateDistributedDataParallel",
    "is_model_wrapper",
    "unwrap_model",
]


# MMFullyShardedDataParallel imports torch.distributed.fsdp (about half a second): it is loaded on
# first access.
__getattr__ = lazy_attributes(__name__, {"MMFullyShardedDataParallel": ".fully_sharded"})
