"""Which device a ``module.to(...)`` / ``module.cuda(...)`` call moves a module to.

Data preprocessors hold no tensors that say where the batch must go (a BaseDataPreprocessor has
no parameters at all), so they remember the device of the last move; the models that own them
tell them about every move through these two helpers.
"""

from __future__ import annotations

from typing import Any

import torch


def device_of_to_args(*args: Any, **kwargs: Any) -> torch.device | None:
    """The device named by arguments of ``nn.Module.to`` (None when they name only a dtype).

    Example:
        >>> device_of_to_args('cpu', torch.float16)
        device(type='cpu')
        >>> device_of_to_args(torch.float16) is None
        True
    """
    # torch's own parser accepts exactly what Module.to accepts (device, dtype, tensor, kwargs).
    device = torch._C._nn._parse_to(*args, **kwargs)[0]
    return None if device is None else torch.device(device)


def accelerator_device(device_type: str, device: int | str | torch.device | None) -> torch.device:
    """The device ``module.cuda(device)`` (or ``.npu``, ``.mlu``, ``.musa``) moves to: the
    current device of that type when ``device`` is None, else the index or device given.

    Example:
        >>> accelerator_device('cuda', 1)
        device(type='cuda', index=1)
    """
    if device is None:
        backend = getattr(torch, device_type, None)
        current = getattr(backend, "current_device", None)
        if current is None:
            raise RuntimeError(
                f"cannot move to the current {device_type} device: this torch has no "
                f"torch.{device_type} backend (is its adapter installed?)"
            )
        return torch.device(device_type, current())
    if isinstance(device, int):
        return torch.device(device_type, device)
    device = torch.device(device)
    if device.type != device_type:
        raise ValueError(
            f".{device_type}() was given the {device.type} device {str(device)!r}; pass an index "
            f"or a {device_type} device, or use .to({str(device)!r})"
        )
    return device


def with_index(device: torch.device) -> torch.device:
    """``device`` with the index a tensor moved there gets: the current device of its type when
    it names none ('cuda' is cuda:0 while device 0 is current); CPU and meta stay as they are.

    Example:
        >>> with_index(torch.device('cpu'))
        device(type='cpu')
    """
    if device.index is not None or device.type in ("cpu", "meta"):
        return device
    current = getattr(getattr(torch, device.type, None), "current_device", None)
    if current is None:
        return device
    try:
        return torch.device(device.type, current())
    except (RuntimeError, AssertionError):  # that backend has no usable device here
        return device
