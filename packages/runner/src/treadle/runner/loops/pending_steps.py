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

At a light step (iter_hooks.py), where the loop calls the user hooks that implement only
``after_train_iter`` but not the recording hooks, a hook reading the hub sees each recording
hook's ``after_train_iter`` of the step when that hook comes before it, and only its
``before_train_iter`` otherwise.

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
        # While a light step (``light_iteration``) calls a hook (TrainIterHooks.call_light):
        # for each recorder, whether it comes before that hook; None otherwise.
        self.light_iteration = 0
        self.light_passed: tuple[bool, ...] | None = None

    def __call__(self) -> None:
        loop = self._loop
        passed = self.light_passed
        if passed is not None:
            self._write_at_hook(passed)
            return
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

    def _write_at_hook(self, passed: tuple[bool, ...]) -> None:
        """What the hub shows the hook a light step is calling: a recorder before it has run
        its after_train_iter of the step, one after it only its before_train_iter."""
        loop, iteration = self._loop, self.light_iteration
        runner, fetched_at = loop.runner, loop.step_fetched_at
        for hook, done in zip(self._hooks.recorders, passed, strict=True):
            if done:
                hook.write_pending(runner, iteration + 1, None)
            else:
                hook.write_pending(runner, iteration, fetched_at)
