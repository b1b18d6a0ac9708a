"""Turn the device a user wrote ('cuda:1', 'npu', a torch.device) into a checked torch.device.

torch.device('cuda:7') succeeds on a machine with one GPU and fails later, deep inside the first
tensor move; resolving up front says what is wrong while the user's words are at hand.
"""

from __future__ import annotations

import difflib

import torch

from .availability import get_device, is_mps_available
from .vendors import VENDOR_MODULES, import_vendor

# Types a run can be placed on; 'meta' builds models without memory.
KNOWN_DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "npu", "mlu", "musa", "meta")


def _parse(device: str) -> tuple[str, int | None]:
    device_type, sep, index_text = device.strip().partition(":")
    if device_type not in KNOWN_DEVICE_TYPES:
        close = difflib.get_close_matches(device_type, KNOWN_DEVICE_TYPES, n=3)
        hint = f"; did you mean {' or '.join(repr(name) for name in close)}?" if close else ""
        raise ValueError(
            f"unknown device {device!r}: the type {device_type!r} is not one of "
            f"{', '.join(KNOWN_DEVICE_TYPES)}{hint}"
        )
    if not sep:
        return device_type, None
    if not index_text.isdigit():
        raise ValueError(
            f"device {device!r}: the index after ':' must be a whole number >= 0, got "
            f"{index_text!r}"
        )
    return device_type, int(index_text)


def _count(device_type: str) -> int:
    """How many devices of ``device_type`` this process can use (0: none)."""
    if device_type == "mps":
        return 1 if is_mps_available() else 0
    vendor = VENDOR_MODULES.get(device_type)
    if vendor is not None and import_vendor(vendor) is None:
        return 0
    module = getattr(torch, device_type, None)
    if module is None or not module.is_available():
        return 0
    return int(module.device_count())


def resolve_device(device: str | torch.device | None = None) -> torch.device:
    """The ``torch.device`` that ``device`` names, after checking this machine has it.

    None means ``get_device()``: the first accelerator found, else the CPU. Errors name what was
    written: an unknown type (with the closest known ones), a type this machine lacks, or an
    index beyond the number of devices.

    Example:
        >>> resolve_device('cpu')
        device(type='cpu')
        >>> resolve_device('cuda:3')  # on a machine with 2 GPUs
        Traceback (most recent call last):
        ValueError: device 'cuda:3': index 3 is out of range, this machine has 2 cuda devices ...
    """
    if device is None:
        device = get_device()
    if isinstance(device, torch.device):
        device_type, index, written = device.type, device.index, str(device)
        if device_type not in KNOWN_DEVICE_TYPES:
            _parse(device_type)  # raises with the known types listed
    elif isinstance(device, str):
        device_type, index = _parse(device)
        written = device
    else:
        raise TypeError(
            f"device must be a str such as 'cuda:0', a torch.device or None, got "
            f"{type(device).__name__}: {device!r}"
        )
    if device_type in ("cpu", "meta"):
        return torch.device(device_type, index)
    count = _count(device_type)
    if count == 0:
        raise RuntimeError(
            f"device {written!r}: this machine has no usable {device_type} device "
            f"(available here: {get_device()}); check the driver and the torch build "
            f"(torch {torch.__version__})"
        )
    if index is not None and index >= count:
        raise ValueError(
            f"device {written!r}: index {index} is out of range, this machine has {count} "
            f"{device_type} device{'s' if count != 1 else ''} (indices 0 to {count - 1})"
        )
    return torch.device(device_type, index)
