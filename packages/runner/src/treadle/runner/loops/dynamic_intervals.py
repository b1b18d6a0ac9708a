"""``calc_dynamic_intervals``: validation intervals that change at milestones."""

from __future__ import annotations

import bisect
from collections.abc import Sequence


def calc_dynamic_intervals(
    start_interval: int, dynamic_interval_list: Sequence[Sequence[int]] | None = None
) -> tuple[list[int], list[int]]:
    """The milestones (starting with 0) and the interval that holds from each on.

    ``dynamic_interval_list`` holds ``(milestone, interval)`` pairs; a config written in YAML or
    JSON gives lists, which are accepted as well as tuples.

    Example:
        >>> calc_dynamic_intervals(1, [(10, 5), (20, 2)])
        ([0, 10, 20], [1, 5, 2])
    """
    milestones, intervals = [0], [start_interval]
    if dynamic_interval_list is None:
        return milestones, intervals
    if isinstance(dynamic_interval_list, (str, bytes)) or not isinstance(
        dynamic_interval_list, Sequence
    ):
        raise TypeError(
            f"dynamic_intervals must be a list of (milestone, interval) pairs, got "
            f"{type(dynamic_interval_list).__name__}: {dynamic_interval_list!r}"
        )
    for pair in dynamic_interval_list:
        if (
            isinstance(pair, (str, bytes))
            or not isinstance(pair, Sequence)
            or len(pair) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
        ):
            raise TypeError(
                f"dynamic_intervals must be a list of (milestone, interval) pairs of ints, "
                f"got the entry {pair!r} in {dynamic_interval_list!r}"
            )
        milestone, interval = pair
        if milestone <= milestones[-1]:
            raise ValueError(
                f"dynamic_intervals milestones must increase (and be > 0), got {milestone} "
                f"after {milestones[-1]} in {dynamic_interval_list!r}"
            )
        if interval < 1:
            raise ValueError(
                f"dynamic_intervals intervals must be >= 1, got {interval} at milestone {milestone}"
            )
        milestones.append(milestone)
        intervals.append(interval)
    return milestones, intervals


def interval_at(milestones: list[int], intervals: list[int], progress: int) -> int:
    """The interval in force for ``progress`` (MMEngine looks up the next epoch/iteration)."""
    return intervals[bisect.bisect(milestones, progress) - 1]
