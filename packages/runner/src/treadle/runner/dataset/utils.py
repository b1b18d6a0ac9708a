"""The collate functions and ``worker_init_fn``, where ``mmengine.dataset.utils`` has them."""

from __future__ import annotations

from .build_collate import build_collate_fn
from .collate import COLLATE_FUNCTIONS, default_collate, pseudo_collate
from .worker_init import worker_init_fn

__all__ = [
    "COLLATE_FUNCTIONS",
    "build_collate_fn",
    "default_collate",
    "pseudo_collate",
    "worker_init_fn",
]
