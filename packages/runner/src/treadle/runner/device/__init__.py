"""treadle.runner.device: which accelerator this process runs on.

The API follows MMEngine 0.10's ``mmengine.device``: ``get_device()`` names the device type to
use ('npu', 'cuda', 'mlu', 'mps', 'dipu', 'musa', 'xpu' in that order of preference, else
'cpu'), the ``is_*_available()`` functions ask about one backend each, ``get_max_cuda_memory``
reports the peak memory of a step. ``resolve_device`` turns what a user wrote ('cuda:1') into a
``torch.device`` after checking that this machine has it. ``current_device``,
``device_count``, ``set_device``, ``get_max_memory`` and ``dist_backend_for`` answer for
whichever accelerator the process has, through ``torch.accelerator`` where torch has it.

Vendor adapters (torch_npu, torch_mlu, torch_musa, torch_dipu) are imported only when they are
installed and a question needs them.
"""

from __future__ import annotations

from .accelerator import current_device, device_count, dist_backend_for, set_device
from .autocast import autocast
from .availability import (
    get_device,
    is_cuda_available,
    is_dipu_available,
    is_mlu_available,
    is_mps_available,
    is_musa_available,
    is_npu_available,
    is_npu_support_full_precision,
    is_xpu_available,
)
from .memory import get_max_cuda_memory, get_max_memory, get_max_musa_memory
from .resolve import KNOWN_DEVICE_TYPES, resolve_device

__all__ = [
    "KNOWN_DEVICE_TYPES",
    "autocast",
    "current_device",
    "device_count",
    "dist_backend_for",
    "get_device",
    "get_max_cuda_memory",
    "get_max_memory",
    "get_max_musa_memory",
    "is_cuda_available",
    "is_dipu_available",
    "is_mlu_available",
    "is_mps_available",
    "is_musa_available",
    "is_npu_available",
    "is_npu_support_full_precision",
    "is_xpu_available",
    "resolve_device",
    "set_device",
]
