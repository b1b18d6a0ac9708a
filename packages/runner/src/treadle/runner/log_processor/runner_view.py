"""What the LogProcessor reads from the runner besides its loops: is training on, and peak
memory (the loops, epoch and iteration are MMEngine's steps, in ``mmengine_steps.py``).

The runner arrives as an argument (this layer never imports it), so only its public surface is
used, plus ``_train_loop``: asking ``runner.train_loop`` would build a train loop in a run that
only validates or tests, as in MMEngine.
"""

from __future__ import annotations

import torch

from treadle.runner.device import get_max_memory, is_cuda_available, is_musa_available

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MODES = ("train", "val", "test")
_MIB = 1024 * 1024


def has_train_loop(runner: Any) -> bool:
    """Whether the runner has built a train loop (a config dict or None means it has not)."""
    loop = getattr(runner, "_train_loop", None)
    return loop is not None and not isinstance(loop, dict)


def eval_loss_names(runner: Any, mode: str) -> frozenset[str]:
    """The metric names treadle's validation loss (``compute_loss=True``) reports in the loop
    of ``mode``, if that loop is built and has them (read without building a loop)."""
    loop = getattr(runner, f"_{mode}_loop", None)
    return getattr(loop, "loss_metric_names", None) or frozenset()


def max_memory_mib(runner: Any) -> int | None:
    """Peak accelerator memory (MiB) since the previous logging step, or None on CPU.

    Reading the peak is a host-side counter: no device synchronization.
    """
    return get_max_memory(getattr(runner.model, "output_device", None))


def counts_memory() -> bool:
    """Whether an accelerator whose peak memory the line shows is in use (not on the CPU, nor
    on MPS, which has no peak counter): where MMEngine's line asks ``_get_max_memory``."""
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None and hasattr(accelerator, "max_memory_allocated"):
        current = accelerator.current_accelerator(check_available=True)
        return current is not None and current.type != "mps"
    return is_cuda_available() or is_musa_available()


def mmengine_max_memory_mib(runner: Any) -> int | None:
    """``LogProcessor._get_max_memory``: the peak memory (MiB) of the accelerator in use, then
    counting again. Without one, MMEngine's method still asks ``torch.cuda``'s counters (code
    that stands in for them, such as a test of a GPU's log line on a CPU machine, sees them
    read); where CUDA cannot answer, None (MMEngine fails with torch's error).
    """
    device = getattr(runner.model, "output_device", None)
    if counts_memory():
        return get_max_memory(device)
    try:
        peak = torch.cuda.max_memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
    except (AttributeError, AssertionError, RuntimeError):  # torch without CUDA, no GPU
        return None
    return int(peak) // _MIB
