"""``ParamSchedulerHook``: steps the parameter schedulers at their pace."""

from __future__ import annotations

import weakref
from typing import Any

from ..registry import HOOKS
from .errors import RunnerStateTypeError
from .hook import DATA_BATCH, Hook

_SHAPE = (
    "runner.param_schedulers should be list of ParamScheduler or a dict containing list of "
    "ParamScheduler (one list per optimizer)"
)


def _scheduler_lists(runner: Any, built_only: bool = False) -> list[list[Any]]:
    """``runner.param_schedulers`` as lists of schedulers (one per optimizer when a dict).

    ``built_only`` leaves out the lists that are not built schedulers yet (configs, outside
    training), where MMEngine's validation step skips them.
    """
    schedulers = runner.param_schedulers
    if schedulers is None:
        return []
    if isinstance(schedulers, list):
        groups = [schedulers]
    elif isinstance(schedulers, dict):
        groups = list(schedulers.values())
    else:
        raise TypeError(
            f"ParamSchedulerHook: {_SHAPE}, got {type(schedulers).__name__}: {schedulers!r}"
        )
    if built_only:
        return [group for group in groups if isinstance(group, list) and _built(group)]
    for group in groups:
        if not isinstance(group, list):
            # MMEngine asserts here.
            raise RunnerStateTypeError(
                f"ParamSchedulerHook: {_SHAPE}, got a dict holding {type(group).__name__}: "
                f"{group!r}"
            )
    return groups


def _built(group: list[Any]) -> bool:
    # Outside training (runner.val()) the runner's schedulers are still configs.
    return all(hasattr(scheduler, "step") for scheduler in group)


def _skip_counters(runner: Any) -> dict[int, Any]:
    """The optimizer wrappers that count skipped steps (``AmpOptimWrapper`` with a loss
    scaler), by the id of the wrapper and of its torch optimizer (a scheduler holds either)."""
    optim_wrapper = getattr(runner, "optim_wrapper", None)
    if optim_wrapper is None:
        return {}
    # Looked up on the class: a Mock runner's wrapper makes up any attribute it is asked for.
    several = callable(getattr(type(optim_wrapper), "values", None))
    wrappers = list(optim_wrapper.values()) if several else [optim_wrapper]
    counters: dict[int, Any] = {}
    for wrapper in wrappers:
        if isinstance(getattr(wrapper, "skipped_steps", None), int):
            counters[id(wrapper)] = wrapper
            counters[id(getattr(wrapper, "optimizer", wrapper))] = wrapper
    return counters


@HOOKS.register_module()
class ParamSchedulerHook(Hook):
    """Steps every scheduler of ``runner.param_schedulers``: those with ``by_epoch=False`` after
    each training iteration, those with ``by_epoch=True`` after each training epoch, and those
    that need validation results (``ReduceOnPlateauLR``...) after each validation, with its
    metrics.

    An iteration whose optimizer step the fp16 loss scaler skipped (inf/NaN gradients) does not
    advance the iteration-based schedulers of that optimizer: a schedule counts the updates
    really made, and never steps before the optimizer first did (PyTorch's "lr_scheduler.step()
    before optimizer.step()" case). Iterations that only accumulate gradients
    (``accumulative_counts``) still advance them, as in MMEngine, so schedules keep their
    meaning in iterations.

    Args:
        step_on_skipped: advance on skipped steps too (MMEngine's behaviour: every iteration).

    Example:
        >>> runner_cfg = dict(default_hooks=dict(
        ...     param_scheduler=dict(type='ParamSchedulerHook', step_on_skipped=False)))
    """

    priority = "LOW"

    def __init__(self, step_on_skipped: bool = False) -> None:
        if not isinstance(step_on_skipped, bool):
            raise TypeError(
                f"ParamSchedulerHook step_on_skipped must be True or False, got "
                f"{type(step_on_skipped).__name__}: {step_on_skipped!r}"
            )
        self.step_on_skipped = step_on_skipped
        # The per-iteration schedulers, found once, each with the wrapper whose skipped steps
        # hold it back (None: always steps): the step path then only calls step().
        self._iter_schedulers: list[tuple[Any, Any]] | None = None
        self._source: Any = None
        # The wrappers that count skipped steps, with their count at the last iteration (0
        # before their first: a skip at the first iteration holds the schedulers too).
        self._counters: list[Any] = []
        self._seen: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()

    def _by_iter(self, runner: Any) -> list[tuple[Any, Any]]:
        schedulers = runner.param_schedulers
        # Rebuilt when the runner's schedulers object is replaced (a resume builds new ones).
        if self._iter_schedulers is None or self._source is not schedulers:
            groups = _scheduler_lists(runner)
            counters = {} if self.step_on_skipped else _skip_counters(runner)
            self._iter_schedulers = [
                (s, counters.get(id(getattr(s, "optimizer", None))))
                for group in groups
                for s in group
                if not s.by_epoch
            ]
            self._source = schedulers
            held = {id(w): w for _, w in self._iter_schedulers if w is not None}
            self._counters = list(held.values())
        return self._iter_schedulers

    def next_train_iter(self, runner: Any, iteration: int, batch_idx: int) -> int | None:
        """Every iteration when a scheduler steps by iteration, else none."""
        return iteration if self._by_iter(runner) else None

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | None = None,
    ) -> None:
        schedulers = self._by_iter(runner)
        if not self._counters:
            for scheduler, _ in schedulers:
                scheduler.step()
            return
        skipped = self._skipped_now()
        for scheduler, wrapper in schedulers:
            if wrapper is None or id(wrapper) not in skipped:
                scheduler.step()

    def _skipped_now(self) -> set[int]:
        """The ids of the wrappers that skipped a step since the last iteration (host ints:
        the scaler read its overflow flag already)."""
        skipped = set()
        seen = self._seen
        for wrapper in self._counters:
            count = wrapper.skipped_steps
            # A wrapper kept across a resume (new schedulers) keeps its last count.
            if count != seen.get(wrapper, 0):
                seen[wrapper] = count
                skipped.add(id(wrapper))
        return skipped

    def after_train_epoch(self, runner: Any) -> None:
        for group in _scheduler_lists(runner):
            for scheduler in group:
                if scheduler.by_epoch:
                    scheduler.step()

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        if metrics is None:
            return
        for group in _scheduler_lists(runner, built_only=True):
            for scheduler in group:
                if scheduler.by_epoch and getattr(scheduler, "need_val_args", False):
                    scheduler.step(metrics)
