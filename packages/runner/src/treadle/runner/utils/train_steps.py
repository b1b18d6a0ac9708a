"""What the train loops record of each step while no iteration hook is due.

The loops call the ``before_train_iter``/``after_train_iter`` hooks only at iterations where
one of them has work (see ``Hook.next_train_iter``). Meanwhile they keep one plain tuple per
step in ``runner.train_loop.steps_since_hooks``: ``(iteration, batch_idx, fetched_at, done_at,
outputs)``, the host clock (``time.perf_counter``) when the batch was in hand and when
``train_step`` returned, and what it returned. Hooks that only record (``defer_train_iter``)
read them when they are called; the list is emptied after the ``after_train_iter`` hooks ran.
"""

from __future__ import annotations

from typing import Any

# Fields of a step record.
ITERATION, BATCH_IDX, FETCHED_AT, DONE_AT, OUTPUTS = range(5)


def recorded_steps(runner: Any) -> list[tuple] | None:
    """The steps the train loop recorded since the iteration hooks last ran, ending with the
    current iteration; None where the loop keeps no records (a loop of one's own that calls
    the hooks at every iteration), so the hook records the current step itself.

    Example:
        >>> recorded_steps(object()) is None
        True
    """
    loop = getattr(runner, "_train_loop", None)
    steps = getattr(loop, "steps_since_hooks", None)
    if not steps or steps[-1][ITERATION] != loop.iter:
        return None
    return steps
