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

Where every hook is due at every iteration (a user hook implementing ``after_train_iter``
with Hook's own ``next_train_iter``, as most do), the table keeps that step as cheap as the
same hooks called in a plain loop: a hook with Hook's own ``next_train_iter`` is never asked
(it would answer "now"), a hook that is due no more this epoch is left out of the calls until
the table is refreshed, and the others' next iterations sit in a list by position, not in a
dict by id. Where such hooks implement ``after_train_iter`` alone, the steps at which no other
hook is due are "light" (:meth:`TrainIterHooks.call_light`): only those hooks are called, and
the recording hooks' work is written when one of them reads the message hub, as far as each
recording hook had gone at the reader's place in the call order.
"""

from __future__ import annotations

import math
from typing import Any

_NEVER = math.inf
# The slot of a hook that is called at every iteration where the hooks run: it is not asked.
_ALWAYS = -1


def _due_every_step(hook: Any) -> bool:
    """Whether ``hook`` keeps Hook's own ``next_train_iter``, which answers "now" at every
    iteration (it carries ``every_iteration``): such a hook needs no asking."""
    if "next_train_iter" in getattr(hook, "__dict__", {}):
        return False
    ask = getattr(type(hook), "next_train_iter", None)
    return getattr(ask, "every_iteration", False) is True


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
        # (hook, bound method, slot): the slot of the hook's next due iteration in _next, or
        # _ALWAYS for a hook called wherever the hooks run (it defers, or is due every step).
        self._before: list[tuple[Any, Any, int]] = []
        self._after: list[tuple[Any, Any, int]] = []
        # The hooks asked when they are next due, and their answers (slot by slot).
        self._asked: list[Any] = []
        self._next: list[float] = []
        # Whether a hook with Hook's own next_train_iter is called: then every iteration is due.
        self._every_step = False
        self._catch_up: list[Any] = []
        # The iteration of the last call_after: the recording hooks skipped no step when the
        # next call_before is at the one after it, and have nothing to catch up.
        self._last_called: float = -_NEVER
        # The hooks that only record and write what they skipped when asked, in the order of
        # their calls (the message hub's pending writer asks them; see pending_steps.py).
        self.recorders: list[Any] = []
        # Whether the loop may run "light" steps (see call_light): the hooks due at every
        # step have only after_train_iter, and every recorder writes what is read when read.
        self.light = False
        # The after_train_iter calls of a light step: (hook, method, passed), passed telling
        # for each recorder whether it comes before the hook (a read there sees its
        # after_train_iter; see call_light).
        self._light_calls: list[tuple[Any, Any, tuple[bool, ...]]] = []
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
        before = dispatch.methods("before_train_iter")
        after = dispatch.methods("after_train_iter")
        hooks: dict[int, Any] = {}
        for hook, _ in before + after:
            hooks.setdefault(id(hook), hook)
        deferring = {key for key, hook in hooks.items() if getattr(hook, "defer_train_iter", False)}
        # The recording hooks write the steps they skipped before any hook reads the hub.
        self.recorders = [
            hooks[key]
            for key in hooks
            if key in deferring and callable(getattr(hooks[key], "record_skipped_steps", None))
        ]
        self._catch_up = [hook.record_skipped_steps for hook in self.recorders]
        always = {
            key for key, hook in hooks.items() if key not in deferring and _due_every_step(hook)
        }
        self._every_step = bool(always)
        before_ids = {id(hook) for hook, _ in before}
        self.light = (
            bool(always)
            and not any(key in before_ids for key in always)
            and all(getattr(hook, "writes_when_read", False) for hook in self.recorders)
            and len(self.recorders) == len(deferring)
        )
        asked, answers = [], []
        slots: dict[int, int] = dict.fromkeys(deferring | always, _ALWAYS)
        for key, hook in hooks.items():
            if key in slots:
                continue
            due = self._ask(hook, iteration, batch_idx)
            if due == _NEVER:
                continue  # not due again before the next refresh: left out of the calls
            slots[key] = len(asked)
            asked.append(hook)
            answers.append(due)
        self._asked, self._next = asked, answers
        self._last_called = -_NEVER
        self._before = [(h, m, slots[id(h)]) for h, m in before if id(h) in slots]
        self._after = [(h, m, slots[id(h)]) for h, m in after if id(h) in slots]
        self._light_calls = self._light_calls_in(after, always)
        if self._every_step and not self.light:
            self.due = iteration
        else:
            self.due = min(answers, default=_NEVER)

    def _light_calls_in(self, after: list[tuple[Any, Any]], always: set[int]) -> list[tuple]:
        """(hook, method, passed) for each hook due at every step, in the after_train_iter
        order; passed: for each recorder, whether it comes before that hook."""
        places = {id(hook): place for place, hook in enumerate(self.recorders)}
        passed = [False] * len(places)
        calls = []
        for hook, method in after:
            if id(hook) in places:
                passed[places[id(hook)]] = True
            elif id(hook) in always:
                calls.append((hook, method, tuple(passed)))
        return calls

    def _ask(self, hook: Any, iteration: int, batch_idx: int) -> float:
        ask = getattr(hook, "next_train_iter", None)
        if ask is None:
            return iteration
        due = ask(self.runner, iteration, batch_idx)
        if due is None:
            return _NEVER
        return max(due, iteration)

    def _call(
        self, calls: list[tuple[Any, Any, int]], point: str, iteration: int, **kwargs: Any
    ) -> None:
        runner, due = self.runner, self._next
        for hook, method, slot in calls:
            if slot != _ALWAYS and due[slot] > iteration:
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
        if iteration != self._last_called + 1:
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
            self._last_called = iteration
            return
        self._last_called = iteration
        due = self._next
        for slot, next_due in enumerate(due):
            if next_due <= iteration:
                due[slot] = self._ask(self._asked[slot], iteration + 1, batch_idx + 1)
        if self._every_step and not self.light:
            self.due = iteration + 1
        else:
            self.due = min(due, default=_NEVER)

    def call_light(
        self, iteration: int, batch_idx: int, data_batch: Any, outputs: Any, writer: Any
    ) -> bool:
        """A light step: ``iteration`` is not ``due``, but hooks due at every step implement
        ``after_train_iter`` (and only that). They are called in their order; the recorders
        are not. A recorder's work waits in the loop's records, and the message hub's pending
        ``writer`` writes it when a hook reads the hub: for a recorder of a higher priority
        than the reading hook, its after_train_iter of ``iteration`` (this step's loss, time,
        ETA); for one of a lower priority, its before_train_iter only (this step's learning
        rates and data time), as MMEngine's hooks show the hub there. Returns whether the
        hooks changed (the table is then refreshed from the next iteration)."""
        runner = self.runner
        writer.light_iteration = iteration
        try:
            for hook, method, passed in self._light_calls:
                writer.light_passed = passed
                try:
                    method(runner, batch_idx=batch_idx, data_batch=data_batch, outputs=outputs)
                except Exception as error:
                    error.add_note(f"raised by {type(hook).__name__}.after_train_iter")
                    raise
        finally:
            writer.light_passed = None
        if getattr(self._dispatch, "version", None) != self._version:
            self.refresh(iteration + 1, batch_idx + 1)
            return True
        return False
