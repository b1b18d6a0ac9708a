"""Is a backend usable here, and which device type should a run use by default.

On torch with ``torch.accelerator`` (2.6+) the answer for cuda, mps and the vendor types comes
from the one accelerator torch reports for this process; older torch asks each backend module.
"""

from __future__ import annotations

import torch

from .vendors import VENDOR_MODULES, import_vendor

# MMEngine's order of preference when several are present; XPU (which MMEngine does not know)
# comes last.
PREFERRED_DEVICE_TYPES = ("npu", "cuda", "mlu", "mps", "dipu", "musa", "xpu")

# torch_npu's get_soc_version() numbers chips; from 220 (Ascend 910B) they compute in fp32.
_NPU_FULL_PRECISION_SOC = 220


def _accelerator_has(device_type: str) -> bool | None:
    """Whether torch.accelerator reports ``device_type`` with at least one device; None when the
    running torch has no torch.accelerator."""
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is None:
        return None
    current = accelerator.current_accelerator()
    return current is not None and current.type == device_type and accelerator.is_available()


def _backend_has(device_type: str) -> bool:
    # Older torch: the backend's own module, where the adapter (if any) put it.
    if device_type == "mps":
        mps = getattr(torch.backends, "mps", None)
        return mps is not None and mps.is_available()
    module = getattr(torch, device_type, None)
    is_available = getattr(module, "is_available", None)
    return bool(is_available()) if is_available is not None else False


def _is_available(device_type: str) -> bool:
    vendor = VENDOR_MODULES.get(device_type)
    if vendor is not None and import_vendor(vendor) is None:
        return False
    answer = _accelerator_has(device_type)
    return _backend_has(device_type) if answer is None else answer


def is_cuda_available() -> bool:
    """Whether CUDA (or ROCm) GPUs are usable."""
    return _is_available("cuda")


def is_mps_available() -> bool:
    """Whether Apple's Metal (MPS) device is usable."""
    return _is_available("mps")


def is_npu_available() -> bool:
    """Whether Ascend NPUs are usable (torch_npu installed and a device present)."""
    return _is_available("npu")


def is_mlu_available() -> bool:
    """Whether Cambricon MLUs are usable (torch_mlu installed and a device present)."""
    return _is_available("mlu")


def is_musa_available() -> bool:
    """Whether Moore Threads GPUs are usable (torch_musa installed and a device present)."""
    return _is_available("musa")


def is_xpu_available() -> bool:
    """Whether Intel GPUs (XPU) are usable; torch supports them without an adapter."""
    return _is_available("xpu")


def is_dipu_available() -> bool:
    """Whether DeepLink's DIPU is installed. DIPU presents its devices to torch as 'cuda', so
    having the adapter is the answer MMEngine gives too."""
    return import_vendor(VENDOR_MODULES["dipu"]) is not None


def is_npu_support_full_precision() -> bool:
    """Whether the NPU computes in full precision (Ascend 910B and later); False without NPUs."""
    if not is_npu_available():
        return False
    torch_npu = import_vendor(VENDOR_MODULES["npu"])
    return torch_npu.npu.utils.get_soc_version() >= _NPU_FULL_PRECISION_SOC


_CHECKS = {
    "npu": is_npu_available,
    "cuda": is_cuda_available,
    "mlu": is_mlu_available,
    "mps": is_mps_available,
    "dipu": is_dipu_available,
    "musa": is_musa_available,
    "xpu": is_xpu_available,
}


def get_device() -> str:
    """The device type a run uses by default: the first usable one of 'npu', 'cuda', 'mlu',
    'mps', 'dipu', 'musa', 'xpu', else 'cpu'.

    Example:
        >>> get_device()  # on a machine without accelerators
        'cpu'
    """
    for device_type in PREFERRED_DEVICE_TYPES:
        if _CHECKS[device_type]():
            return device_type
    return "cpu"
