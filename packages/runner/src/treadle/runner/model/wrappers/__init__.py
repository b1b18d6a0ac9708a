"""Model wrappers: the distributed containers (DDP, separate DDP, FSDP) with the train, val
and test steps the runner's loops call, and ``is_model_wrapper``."""

from __future__ import annotations

from typing import Any

from .distributed import MMDistributedDataParallel
from .separate_distributed import MMSeparateDistributedDataParallel
from .utils import is_model_wrapper

__all__ = [
    "MMDistributedDataParallel",
    "MMFullyShardedDataParallel",
    "MMSeparateDistributedDataParallel",
    "is_model_wrapper",
]


def __getattr__(name: str) -> Any:
    # MMFullyShardedDataParallel imports torch.distributed.fsdp (about half a second):
    # it is loaded on first access.
    if name == "MMFullyShardedDataParallel":
        from .fully_sharded import MMFullyShardedDataParallel

        return MMFullyShardedDataParallel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
