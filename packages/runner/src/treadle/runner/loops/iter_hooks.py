"""The training iteration hooks, called only at the iterations where one of them has work.

Most iterations need no hook: the logger writes a line every ``interval`` batches, the
checkpoint hook saves every ``interval`` iterations, and RuntimeInfoHook / IterTimerHook only
record. Each hook says when it next needs its ``before_train_iter``/``after_train_iter``
(``Hook.next_train_iter``; by default, at every iteration) and the loop calls the iteration
hooks only at the first of those iterations. There it calls every hook that is due, and the
hooks that only record (``Hook.defer_train_iter``), which then read the steps the loop recorded
since their last call: first, before any hook runs, they write the steps they skipped
(``record_skipped_steps``), so that a hook of any priority reads the message hub as MMEngine
shows it there. An iteration with nothing due costs one integer comparison.
"""

from __future__ import annotations

import math
from typing import Any

_NEVER = math.inf


class TrainIterHooks:
    """The ``before_train_iter``/``after_train_iter`` hooks of a runner, called when due.

    ``due`` is the first iteration, from the last one asked on, at which a hook has work; the
    loop calls :meth:`call_before` and :meth:`call_after` at that iteration (or at any other
    one: a hook is called there only if it is due, or defers). The table is rebuilt from the
    runner's hook dispatch when the hooks change.

    Example:
        >>> hooks = TrainIterHooks.of(runner)  # doctest: +SKIP
        >>> hooks.refresh(iteration=0, batch_idx=0)  # doctest: +SKIP
        >>> hooks.due  # doctest: +SKIP
        49
    """

    def __init__(self, runner: Any, dispatch: Any) -> None:
        self.runner = runner
        self._dispatch = dispatch
        self._version: Any = None
        self._before: list[tuple[Any, Any]] = []
        self._after: list[tuple[Any, Any]] = []
        # Next due iteration of each hook that does not defer, by id (math.inf: none).
        self._next: dict[int, float] = {}
        self._asked: list[Any] = []
        self._catch_up: list[Any] = []
        # The hooks that only record and write what they skipped when asked, in the order of
        # their calls (the message hub's pending writer asks them; see pending_steps.py).
        self.recorders: list[Any] = []
        self.due: float = 0

    @classmethod
    def of(cls, runner: Any) -> TrainIterHooks | None:
        """The hooks of ``runner``, or None for a runner without a hook dispatch table (the
        loop then calls ``runner.call_hook`` at every iteration)."""
        dispatch = getattr(runner, "_dispatch", None)
        if dispatch is None or not callable(getattr(dispatch, "methods", None)):
            return None
        return cls(runner, dispatch)

    def refresh(self, iteration: int, batch_idx: int) -> None:
        """Ask every hook when it is next due, from ``iteration`` (whose batch is
        ``batch_idx``) on: at the start of an epoch, and when the hooks changed."""
        dispatch = self._dispatch
        self._version = getattr(dispatch, "version", None)
        self._before = dispatch.methods("before_train_iter")
        self._after = dispatch.methods("after_train_iter")
        hooks: dict[int, Any] = {}
        for hook, _ in self._before + self._after:
            hooks.setdefault(id(hook), hook)
        self._asked = [
            hook for hook in hooks.values() if not getattr(hook, "defer_train_iter", False)
        ]
        # The recording hooks write the steps they skipped before any hook reads the hub.
        self.recorders = [
            hook
            for hook in hooks.values()
            if getattr(hook, "defer_train_iter", False)
            and callable(getattr(hook, "record_skipped_steps", None))
        ]
        self._catch_up = [hook.record_skipped_steps for hook in self.recorders]
        self._next = {id(hook): self._ask(hook, iteration, batch_idx) for hook in self._asked}
        self.due = min(self._next.values(), default=_NEVER)

    def _ask(self, hook: Any, iteration: int, batch_idx: int) -> float:
        ask = getattr(hook, "next_train_iter", None)
        if ask is None:
            return iteration
        due = ask(self.runner, iteration, batch_idx)
        if due is None:
            return _NEVER
        return max(due, iteration)

    def _call(
        self, calls: list[tuple[Any, Any]], point: str, iteration: int, **kwargs: Any
    ) -> None:
        runner, due = self.runner, self._next
        for hook, method in calls:
            next_due = due.get(id(hook))
            if next_due is not None and next_due > iteration:
                continue
            try:
                method(runner, **kwargs)
            except Exception as error:
                error.add_note(f"raised by {type(hook).__name__}.{point}")
                raise

    def call_before(self, iteration: int, batch_idx: int, data_batch: Any) -> None:
        """The ``before_train_iter`` hooks due at ``iteration``, and those that defer (after
        these wrote the steps they skipped, so that every hook reads the message hub as it
        would had they run at every step)."""
        for record_skipped_steps in self._catch_up:
            record_skipped_steps(self.runner, iteration)
        if self._before:
            self._call(
                self._before, "before_train_iter", iteration,
                batch_idx=batch_idx, data_batch=data_batch,
            )  # fmt: skip

    def call_after(self, iteration: int, batch_idx: int, data_batch: Any, outputs: Any) -> None:
        """The ``after_train_iter`` hooks due at ``iteration`` and those that defer; then ask
        the hooks that were due when they are next."""
        if self._after:
            self._call(
                self._after, "after_train_iter", iteration,
                batch_idx=batch_idx, data_batch=data_batch, outputs=outputs,
            )  # fmt: skip
        if getattr(self._dispatch, "version", None) != self._version:
            self.refresh(iteration + 1, batch_idx + 1)
            return
        due = self._next
        for hook in self._asked:
            if due[id(hook)] <= iteration:
                due[id(hook)] = self._ask(hook, iteration + 1, batch_idx + 1)
        self.due = min(due.values(), default=_NEVER)
