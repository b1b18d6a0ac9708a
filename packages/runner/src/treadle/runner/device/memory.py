"""Peak memory of a device since the last call, for the log line of a training step."""

from __future__ import annotations

import torch

from .availability import is_cuda_available, is_musa_available

_MIB = 1024 * 1024


def _peak_bytes(backend: object, device: torch.device | int | None) -> int:
    # The allocator's counters live on the host: reading them does not wait for the device.
    # max_memory_allocated() builds the allocator's whole statistics and flattens them into
    # "a.b.c" keys in Python, thousands of entries (7 ms a call under cProfile on an H100
    # machine, once per log line). The nested form skips the flattening.
    nested = getattr(backend, "memory_stats_as_nested_dict", None)
    if nested is None:
        return int(backend.max_memory_allocated(device))
    return int(nested(device).get("allocated_bytes", {}).get("all", {}).get("peak", 0))


def _peak_mib_and_reset(backend: object, device: torch.device | int | None) -> int:
    peak = _peak_bytes(backend, device)
    backend.reset_peak_memory_stats(device)
    return peak // _MIB


def get_max_cuda_memory(device: torch.device | int | None = None) -> int:
    """The most memory (in MiB) tensors held on ``device`` (the current CUDA device by default)
    since the previous call, then start counting again from now.

    Example:
        >>> if torch.cuda.is_available():
        ...     get_max_cuda_memory()  # e.g. 1536
    """
    if not is_cuda_available():
        raise RuntimeError(
            "get_max_cuda_memory: CUDA is not available on this machine "
            f"(torch {torch.__version__}); ask get_device() which device the run uses"
        )
    return _peak_mib_and_reset(torch.cuda, device)


def get_max_musa_memory(device: torch.device | int | None = None) -> int:
    """The most memory (in MiB) tensors held on a Moore Threads ``device`` since the previous
    call, then start counting again; like ``get_max_cuda_memory``."""
    if not is_musa_available():
        raise RuntimeError(
            "get_max_musa_memory: MUSA is not available on this machine (torch_musa missing or "
            "no device); ask get_device() which device the run uses"
        )
    return _peak_mib_and_reset(torch.musa, device)


def get_max_memory(device: torch.device | int | None = None) -> int | None:
    """The peak memory (MiB) of this process's accelerator since the previous call, then start
    counting again; None on the CPU and on accelerators that do not count (MPS). Device-neutral
    through ``torch.accelerator`` where torch has it, through the CUDA and MUSA modules before.

    Example:
        >>> get_max_memory()  # on a machine without accelerators
    """
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and hasattr(accelerator, "max_memory_allocated"):
        current = accelerator.current_accelerator(check_available=True)
        if current is None or current.type == "mps":
            return None
        backend = torch.cuda if current.type == "cuda" else accelerator
        return _peak_mib_and_reset(backend, device)
    if is_musa_available():
        return _peak_mib_and_reset(torch.musa, device)
    if is_cuda_available():
        return _peak_mib_and_reset(torch.cuda, device)
    return None
