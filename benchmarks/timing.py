"""The timing loop the per-call benchmarks share (run as scripts, they import it by name)."""

from __future__ import annotations

import time
from collections.abc import Callable


def per_call(
    function: Callable[[], object],
    steps: int,
    repeats: int,
    before_repeat: Callable[[], object] | None = None,
) -> float:
    """Best over ``repeats`` of the mean time, in seconds, of one ``function()`` call.

    ``before_repeat`` runs, untimed, before each repeat (a barrier, so that the ranks of a
    process group start together).
    """
    best = float("inf")
    for _ in range(repeats):
        if before_repeat is not None:
            before_repeat()
        start = time.perf_counter()
        for _ in range(steps):
            function()
        best = min(best, (time.perf_counter() - start) / steps)
    return best
