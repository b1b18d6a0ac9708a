"""This process's accelerator, asked the device-neutral way.

torch 2.6+ has ``torch.accelerator``: one accelerator per process (CUDA/ROCm, MPS, XPU, or a
vendor's device once its adapter is imported), with device-neutral calls for the count, the
current index and memory. These helpers use it where the running torch has it and fall back to
the backend modules (``torch.cuda``, ``torch.npu``...) otherwise, so that runner code never has
to spell out 'cuda'.
"""

from __future__ import annotations

import torch

from .availability import get_device

# The collective backend that drives each device type (torch's and the vendors' names).
DIST_BACKENDS = {
    "cuda": "nccl",
    "npu": "hccl",
    "mlu": "cncl",
    "musa": "mccl",
    "xpu": "xccl",
}


def _has_accelerator_api() -> bool:
    return hasattr(torch, "accelerator") and hasattr(torch.accelerator, "current_accelerator")


def _backend_module(device_type: str) -> object | None:
    # dipu presents its devices as 'cuda'; mps has one device and no device module index API.
    return getattr(torch, "cuda" if device_type == "dipu" else device_type, None)


def device_count(device_type: str | None = None) -> int:
    """How many devices of ``device_type`` (None: the run's, ``get_device()``) this process
    sees; 0 for the CPU.

    Example:
        >>> device_count('cpu')
        0
    """
    device_type = get_device() if device_type is None else device_type
    if device_type == "cpu":
        return 0
    if device_type == "mps":
        return 1 if get_device() == "mps" else 0
    if _has_accelerator_api():
        current = torch.accelerator.current_accelerator()
        if current is not None and current.type == device_type:
            return int(torch.accelerator.device_count())
    module = _backend_module(device_type)
    is_available = getattr(module, "is_available", None)
    if is_available is None or not is_available():
        return 0
    return int(module.device_count())


def current_device() -> torch.device:
    """The device this process computes on: the current index of its accelerator (the one
    ``init_dist`` selected from the local rank), or the CPU.

    Example:
        >>> current_device()  # on a machine without accelerators
        device(type='cpu')
    """
    device_type = get_device()
    if device_type in ("cpu", "mps"):
        return torch.device(device_type)
    if _has_accelerator_api():
        current = torch.accelerator.current_accelerator()
        if current is not None and current.type == device_type:
            return torch.device(device_type, torch.accelerator.current_device_index())
    module = _backend_module(device_type)
    return torch.device(device_type, module.current_device())


def set_device(index: int) -> None:
    """Make device ``index`` of the run's accelerator the current one (nothing on the CPU)."""
    device_type = get_device()
    if device_type in ("cpu", "mps"):
        return
    if _has_accelerator_api():
        current = torch.accelerator.current_accelerator()
        if current is not None and current.type == device_type:
            torch.accelerator.set_device_index(index)
            return
    _backend_module(device_type).set_device(index)


def dist_backend_for(device_type: str | None = None) -> str:
    """The collective backend that suits ``device_type`` (None: the run's): nccl for CUDA,
    hccl for NPU, cncl for MLU, mccl for MUSA, xccl for XPU, gloo for the CPU and MPS.

    Example:
        >>> dist_backend_for('cpu')
        'gloo'
        >>> dist_backend_for('cuda')
        'nccl'
    """
    device_type = get_device() if device_type is None else device_type
    return DIST_BACKENDS.get(device_type, "gloo")
