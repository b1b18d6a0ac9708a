"""How many validation runs a train loop has still to do, counted without running it.

The train loops validate after epoch (or iteration) ``p`` when ``p >= val_begin`` and either
``p`` is a multiple of the interval in force for ``p + 1`` (``dynamic_intervals``) or ``p`` is
the last one (see ``TrainLoopBase._validate_if_due``). The train ETA adds the validations to
come at their measured duration, so the count must follow that rule exactly; it is computed per
interval segment, so asking it costs the same for 100 iterations as for a million.
"""

from __future__ import annotations

from collections.abc import Sequence


def validations_left(
    done: int, last: int, val_begin: int, milestones: Sequence[int], intervals: Sequence[int]
) -> int:
    """The progress values ``p`` in ``done + 1 .. last`` after which validation runs.

    ``milestones`` and ``intervals`` are what ``calc_dynamic_intervals`` returns (the first
    milestone is 0). ``p`` uses the interval of the last milestone ``<= p + 1``.

    Example:
        >>> validations_left(0, 10, 1, [0], [3])  # after 3, 6, 9 and the last, 10
        4
        >>> # Interval 1 while p + 1 < 5 (after 1, 2, 3), then 5 (after 5), and the last.
        >>> validations_left(0, 10, 1, [0, 5], [1, 5])
        5
        >>> validations_left(10, 10, 1, [0], [3])
        0
    """
    low = max(done + 1, val_begin, 1)
    if low > last:
        return 0
    count = 0
    last_counted = False
    for index, (milestone, interval) in enumerate(zip(milestones, intervals, strict=True)):
        # p takes this interval while milestone <= p + 1 < next milestone.
        start = max(low, milestone - 1)
        end = last if index + 1 == len(milestones) else min(last, milestones[index + 1] - 2)
        if start > end:
            continue
        count += end // interval - (start - 1) // interval
        if start <= last <= end and last % interval == 0:
            last_counted = True
    # The last epoch/iteration always validates.
    return count if last_counted else count + 1
