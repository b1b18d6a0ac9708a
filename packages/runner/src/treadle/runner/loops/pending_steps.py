"""What the recording hooks owe the message hub between two calls, written when it is read.

While the train loop skips the iteration hooks (see iter_hooks.py), RuntimeInfoHook and
IterTimerHook write nothing: the steps wait in the loop's records until the next iteration at
which a hook is due. Code outside the hooks (a model's ``train_step``, a data preprocessor, a
dataset, a metric) may read the message hub at any step, and must read there what MMEngine
shows, whose hooks run at every step. The loop therefore sets :class:`PendingSteps` as the hub's
``pending_writer`` while it records: the hub calls it before each read, and it has the recording
hooks write what they would have written by then. Writing costs nothing until something reads.

What MMEngine shows depends on where the read happens:

- inside the ``train_step`` of iteration ``i``: the losses and times of the steps before ``i``,
  and the learning rates and data time of ``i`` (its ``before_train_iter`` hooks have run);
- between two steps (a dataset read while the next batch loads): every step up to the last.

The hooks keep track of what they have written, so nothing is written twice: not by a second
read, nor by the hooks themselves when they are next called.
"""

from __future__ import annotations

from typing import Any

from ..utils.train_steps import FETCHED_AT, ITERATION


class PendingSteps:
    """The message hub's ``pending_writer`` while ``loop`` records its steps.

    The loop sets ``loop.step_fetched_at`` (the host clock when the batch was in hand) before
    each ``train_step`` at which the hooks were not called, and None at those where they were;
    a step is running while no record holds that time. The hooks asked are those of ``hooks``
    that defer their iteration calls, each in the order of their calls, with
    ``write_pending(runner, before, fetched_at)``: write the records before iteration
    ``before``, and, when ``fetched_at`` is not None, what ``before_train_iter`` writes at
    ``before`` (a hook without that method: ``record_skipped_steps(runner, before)``).

    Example:
        >>> writer = PendingSteps(loop, loop._iter_hooks)  # doctest: +SKIP
        >>> runner.message_hub.pending_writer = writer  # doctest: +SKIP
    """

    def __init__(self, loop: Any, hooks: Any) -> None:
        self._loop = loop
        self._hooks = hooks
        # The clock readings of the last record and of the running step at the last call:
        # reads in a row find nothing new without asking the hooks. (Held, these floats stay
        # distinct objects from any later reading, so identity tells them apart.)
        self._seen_last: float | None = None
        self._seen_running: float | None = None

    def __call__(self) -> None:
        loop = self._loop
        steps = loop.steps_since_hooks
        last = steps[-1][FETCHED_AT] if steps else None
        fetched_at = loop.step_fetched_at
        if last is self._seen_last and fetched_at is self._seen_running:
            return
        running = fetched_at is not None and last is not fetched_at
        if running:
            before = loop.iter
        elif steps:
            before = steps[-1][ITERATION] + 1
        else:
            return
        runner = loop.runner
        started = fetched_at if running else None
        for hook in self._hooks.recorders:
            write_pending = getattr(hook, "write_pending", None)
            if write_pending is not None:
                write_pending(runner, before, started)
            else:  # a recording hook of one's own: its skipped steps, written as the loop does
                hook.record_skipped_steps(runner, before)
        self._seen_last, self._seen_running = last, fetched_at
