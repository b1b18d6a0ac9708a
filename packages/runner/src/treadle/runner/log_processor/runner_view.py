"""What the LogProcessor reads from the runner: position, loop lengths and peak memory.

The runner arrives as an argument (this layer never imports it), so only its public surface is
used, plus ``_train_loop``: asking ``runner.train_loop`` would build a train loop in a run that
only validates or tests, as in MMEngine.
"""

from __future__ import annotations

from treadle.runner.device import get_max_memory

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MODES = ("train", "val", "test")


def has_train_loop(runner: Any) -> bool:
    """Whether the runner has built a train loop (a config dict or None means it has not)."""
    loop = getattr(runner, "_train_loop", None)
    return loop is not None and not isinstance(loop, dict)


def loop_of(runner: Any, mode: str) -> Any:
    """The runner's loop of ``mode``."""
    return getattr(runner, f"{mode}_loop")


def dataloader_length(runner: Any, mode: str) -> int | None:
    """How many batches an epoch of ``mode`` has; None for a loader without a length (an
    iterable dataset), where MMEngine fails with a TypeError."""
    try:
        return len(loop_of(runner, mode).dataloader)
    except TypeError:
        return None


def log_epoch(runner: Any, mode: str) -> int:
    """The epoch shown in a train or val line: 1-based while training; for validation, the
    epoch just finished (0 when no training runs)."""
    if mode == "train":
        return runner.epoch + 1
    # The train loop has already counted the epoch that validation follows.
    return runner.epoch if has_train_loop(runner) else 0


def max_memory_mib(runner: Any) -> int | None:
    """Peak accelerator memory (MiB) since the previous logging step, or None on CPU.

    Reading the peak is a host-side counter: no device synchronization.
    """
    return get_max_memory(getattr(runner.model, "output_device", None))
