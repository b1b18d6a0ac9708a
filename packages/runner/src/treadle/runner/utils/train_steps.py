"""What the train loops record of each step while no iteration hook is due.

The loops call the ``before_train_iter``/``after_train_iter`` hooks only at iterations where
one of them has work (see ``Hook.next_train_iter``). Meanwhile they keep one plain tuple per
step in ``runner.train_loop.steps_since_hooks``: ``(iteration, batch_idx, fetched_at, done_at,
outputs)``, the host clock (``time.perf_counter``) when the batch was in hand and when
``train_step`` returned, and what it returned. Hooks that only record (``defer_train_iter``)
read them when they are called; the list is emptied after the ``after_train_iter`` hooks ran.
Before the hooks of an iteration run, the loop asks the recording hooks to write the steps it
skipped (``record_skipped_steps``), so every hook, whatever its priority, reads what it would
read had the recording hooks run at every step.
"""

from __future__ import annotations

from typing import Any

# Fields of a step record.
ITERATION, BATCH_IDX, FETCHED_AT, DONE_AT, OUTPUTS = range(5)


def step_records(runner: Any) -> list[tuple] | None:
    """The steps the train loop recorded and has not handed to the iteration hooks yet (at a
    ``before_train_iter`` hook, those before the current iteration; at an ``after_train_iter``
    hook, ending with it); None where the loop keeps no records and calls the hooks at every
    iteration.

    Example:
        >>> step_records(object()) is None
        True
    """
    loop = getattr(runner, "_train_loop", None)
    # ``is not True``: a MagicMock standing in for the runner (as hook tests do) records none.
    if getattr(loop, "records_steps", False) is not True:
        return None
    return loop.steps_since_hooks


def steps_between(runner: Any, through: int, before: int) -> list[tuple] | None:
    """The recorded steps after iteration ``through`` and before iteration ``before`` (what a
    recording hook that has written everything through ``through`` still has to write before
    ``before``), or None when there are none.

    Example:
        >>> steps_between(object(), through=3, before=8) is None
        True
    """
    if through >= before - 1:
        return None  # the usual case where the hooks run at every step: nothing skipped
    steps = step_records(runner)
    if not steps or steps[0][ITERATION] >= before or steps[-1][ITERATION] <= through:
        return None
    if steps[0][ITERATION] <= through or steps[-1][ITERATION] >= before:
        steps = [step for step in steps if through < step[ITERATION] < before]
    return steps
