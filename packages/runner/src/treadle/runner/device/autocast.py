"""``autocast``: mixed precision for a region of code, on whichever device the run uses.

``torch.autocast`` needs the device type spelled out and, given a dtype the device cannot
compute in or a device this machine lacks, only warns and runs the region in full precision.
This front end picks the device type the run uses and chooses a dtype that device computes in.
``device_type='cuda'`` on a machine without CUDA runs, as in MMEngine, in full precision with a
warning (code written for a GPU still runs on a CPU); other device types the machine lacks are
refused, as MMEngine refuses them.
"""

from __future__ import annotations

import contextlib
import warnings

import torch

from .availability import (
    get_device,
    is_cuda_available,
    is_mlu_available,
    is_mps_available,
    is_musa_available,
    is_npu_available,
)
from .resolve import KNOWN_DEVICE_TYPES

# The dtypes autocast computes in, by the names a config may use.
AUTOCAST_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}

# Vendor device types that MMEngine hands to torch.autocast as they are: without the vendor's
# PyTorch extension torch does not know them, and autocast fails even when disabled.
_VENDOR_TYPES = ("mlu", "npu", "musa")

# Device types whose presence treadle can check; others (xpu, hpu...) are left to torch.
_AVAILABLE = {
    "cuda": is_cuda_available,
    "mps": is_mps_available,
    "npu": is_npu_available,
    "mlu": is_mlu_available,
    "musa": is_musa_available,
}


class AutocastDeviceError(RuntimeError, ValueError):
    """autocast cannot run on the device type asked for. MMEngine raises a ValueError for a
    device type it does not autocast on (mps...) and torch a RuntimeError for one it does not
    know (mlu without torch_mlu): this error is both.

    Example:
        >>> try:
        ...     autocast(device_type='cpx')
        ... except ValueError as error:
        ...     isinstance(error, RuntimeError)
        True
    """


def _autocast_available(device_type: str) -> bool:
    try:
        return torch.amp.is_autocast_available(device_type)
    except RuntimeError:  # a type torch does not know at all ('tpu')
        return False


def resolve_autocast_dtype(dtype: str | torch.dtype | None) -> torch.dtype | None:
    """``dtype`` as a ``torch.dtype`` (None stays None), checked to be one autocast computes in.

    Example:
        >>> resolve_autocast_dtype('bfloat16')
        torch.bfloat16
    """
    if dtype is None:
        return None
    if isinstance(dtype, str):
        resolved = AUTOCAST_DTYPES.get(dtype.removeprefix("torch."))
        if resolved is None:
            from treadle.registry.suggestions import close_matches

            close = close_matches(dtype, AUTOCAST_DTYPES)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise ValueError(
                f"autocast dtype {dtype!r} is not one of {', '.join(map(repr, AUTOCAST_DTYPES))}"
                f"{hint} (full precision needs no autocast: train with OptimWrapper)"
            )
        return resolved
    if not isinstance(dtype, torch.dtype):
        raise TypeError(
            f"autocast dtype must be a torch.dtype, one of {', '.join(AUTOCAST_DTYPES)} or None, "
            f"got {type(dtype).__name__}: {dtype!r}"
        )
    if dtype not in AUTOCAST_DTYPES.values():
        raise ValueError(
            f"autocast computes in torch.float16 or torch.bfloat16, not {dtype} "
            f"(full precision needs no autocast: train with OptimWrapper)"
        )
    return dtype


def _device_type(device_type: str | None) -> str:
    if device_type is None:
        return get_device()
    if not isinstance(device_type, str):
        raise TypeError(
            f"autocast device_type must be a str such as 'cuda' or 'cpu' (or None for the "
            f"device the run uses), got {type(device_type).__name__}: {device_type!r}"
        )
    # 'cuda:1' names a device; autocast applies to the whole type.
    return device_type.partition(":")[0]


def _unusable_device_type(device_type: str) -> AutocastDeviceError:
    from treadle.registry.suggestions import close_matches

    usable = [name for name in KNOWN_DEVICE_TYPES if _autocast_available(name)]
    close = close_matches(device_type, usable)
    hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
    return AutocastDeviceError(
        f"User specified autocast device_type {device_type!r}{hint}: torch {torch.__version__} "
        f"has no autocast for it; it has for {', '.join(usable)} (or pass enabled=False)"
    )


def default_autocast_dtype(device_type: str) -> torch.dtype:
    """The dtype autocast uses on ``device_type`` when none is given: bfloat16 on the CPU (as
    MMEngine), torch's default for that device elsewhere (float16 on CUDA)."""
    if device_type == "cpu":
        return torch.bfloat16
    return torch.get_autocast_dtype(device_type)


def autocast(
    device_type: str | None = None,
    dtype: str | torch.dtype | None = None,
    enabled: bool = True,
    cache_enabled: bool | None = None,
) -> contextlib.AbstractContextManager:
    """A region whose eligible operations run in ``dtype`` on ``device_type``.

    Args:
        device_type: 'cuda', 'cpu', 'npu', 'mps'... (an index such as 'cuda:1' is ignored);
            None means the device the run uses (``get_device()``).
        dtype: torch.float16 or torch.bfloat16, or their names; None means bfloat16 on the CPU
            and torch's default (float16) on accelerators.
        enabled: False runs the region in full precision, even inside an enabled autocast.
        cache_enabled: whether autocast caches the casted weights; None keeps torch's setting.

    Returns a context manager, also usable as a decorator.

    Example:
        >>> layer = torch.nn.Linear(4, 4)
        >>> with autocast(device_type='cpu'):
        ...     layer(torch.ones(2, 4)).dtype
        torch.bfloat16
    """
    device_type = _device_type(device_type)
    dtype = resolve_autocast_dtype(dtype)
    if not _autocast_available(device_type):
        if device_type in _VENDOR_TYPES:
            raise AutocastDeviceError(
                f"autocast device_type {device_type!r}: torch {torch.__version__} does not know "
                f"this device type (its vendor's extension, torch_{device_type}, is not "
                f"installed), even for a disabled region"
            )
        if not enabled:
            # Nothing to switch off: MMEngine also lets a disabled region run on such devices.
            return contextlib.nullcontext()
        raise _unusable_device_type(device_type)
    if enabled:
        is_available = _AVAILABLE.get(device_type)
        if device_type == "cuda" and not is_available():
            # MMEngine hands this to torch.autocast, which warns and disables itself.
            warnings.warn(
                f"autocast device_type 'cuda': CUDA is not available on this machine (the run "
                f"uses {get_device()!r}), so autocast is disabled and the region runs in full "
                f"precision, as torch and MMEngine do; leave device_type=None to autocast on "
                f"the device in use",
                UserWarning,
                stacklevel=2,
            )
            enabled = False
        elif is_available is not None and not is_available():
            raise AutocastDeviceError(
                f"User specified autocast device_type {device_type!r}, and this machine has no "
                f"usable {device_type} device (the run uses {get_device()!r}); leave "
                f"device_type=None to autocast on the device in use"
            )
    if dtype is None:
        dtype = default_autocast_dtype(device_type)
    cuda_bf16 = enabled and device_type == "cuda" and dtype == torch.bfloat16
    if cuda_bf16 and not torch.cuda.is_bf16_supported():
        # MMEngine's words: "Current CUDA Device does not support bfloat16".
        raise RuntimeError(
            f"autocast dtype bfloat16: the current CUDA device ({torch.cuda.get_device_name()}) "
            f"does not support bfloat16; switch dtype to float16"
        )
    return torch.autocast(
        device_type=device_type, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled
    )
