"""Turn the epoch-based arguments of a scheduler config into iteration counts.

``convert_to_iter_based=True`` lets a config say "warm up for 1 epoch" and step every
iteration: begin and end become ``int(epochs * epoch_length)``, and each argument a scheduler
measures in steps (step_size, milestones, T_max, total_steps, periods) is multiplied by
``epoch_length``.
"""

from __future__ import annotations

from typing import Any

INF = int(1e9)


def check_epoch_length(epoch_length: Any, owner: str) -> int:
    """``epoch_length`` as a positive int; SchedulerArgumentError naming ``owner`` otherwise."""
    if isinstance(epoch_length, bool) or not isinstance(epoch_length, int) or epoch_length <= 0:
        from ._errors import SchedulerArgumentError

        raise SchedulerArgumentError(
            f"{owner}: `epoch_length` must be a positive integer, but got {epoch_length!r} (the "
            "number of iterations of one epoch, len(train_dataloader))"
        )
    return epoch_length


def scale_steps(value: Any, epoch_length: int) -> Any:
    """``value`` epochs in iterations; lists are scaled item by item, None stays None."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return type(value)(scale_steps(item, epoch_length) for item in value)
    scaled = value * epoch_length
    # Fractional epochs give a float; keep ints where the product is whole.
    if isinstance(scaled, float) and scaled.is_integer():
        return int(scaled)
    return scaled


def scale_range(begin: Any, end: Any, epoch_length: int) -> tuple[int, int]:
    """``begin`` and ``end`` in iterations; an unbounded end stays unbounded."""
    return int(begin * epoch_length), end if end == INF else int(end * epoch_length)
