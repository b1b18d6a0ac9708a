"""Peak memory of a device since the last call, for the log line of a training step."""

from __future__ import annotations

import torch

from .availability import is_cuda_available, is_musa_available

_MIB = 1024 * 1024


def _peak_mib_and_reset(backend: object, device: torch.device | int | None) -> int:
    # max_memory_allocated is a host-side counter: reading it does not wait for the device.
    peak = backend.max_memory_allocated(device)
    backend.reset_peak_memory_stats(device)
    return int(peak) // _MIB


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
