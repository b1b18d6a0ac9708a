"""``IterTimerHook``: how long each iteration and its data loading take, and an honest ETA."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..registry import HOOKS
from ..utils.train_steps import DONE_AT, FETCHED_AT, ITERATION, step_records, steps_between
from .hook import DATA_BATCH, Hook, keeps_methods
from .iter_timer_pauses import SAVES_KEY, checkpoint_saves

# The message hub keys of each loop, formatted once rather than on every step.
_KEYS = {mode: (f"{mode}/time", f"{mode}/data_time") for mode in ("train", "val", "test")}
_TRAIN_TIME, _TRAIN_DATA_TIME = _KEYS["train"]
# checkpoint_saves' answer before the first save.
_NO_SAVES = (0, 0.0, 0.0)
# Runtime info: how long the last val/test pass took (the LogProcessor puts it in the line).
PASS_TIME_KEYS = {"val": "val_time", "test": "test_time"}


@HOOKS.register_module()
class IterTimerHook(Hook):
    """Puts ``<mode>/time`` (a whole iteration, data loading included) and ``<mode>/data_time``
    (waiting for the batch) in the message hub after each iteration of every loop, and the
    estimated seconds left of the current loop as the runtime info ``eta``.

    The train ETA is the mean iteration time × the iterations left, plus the validation runs
    still to come × their mean measured duration, plus the checkpoint saves still to come
    (``CheckpointHook.saves_left``) × their mean measured duration. Validation runs and saves
    are left out of the iteration times: the iteration after one does not carry it. Until the
    first validation (or save) of this process has been measured, it counts as 0 s.

    After each val/test pass the runtime info ``val_time``/``test_time`` holds how long the pass
    took (its batches and the evaluation); the log line after the pass shows it.

    Train and evaluation timings have their own keys (``train/time`` and ``val/time``...), so
    curves of one never mix in the other. The host clock is read; the device is never
    synchronized, so a step's time is when its work was queued, which averages out over the
    logging window.

    Example:
        >>> runner_cfg = dict(default_hooks=dict(timer=dict(type='IterTimerHook')))
    """

    priority = "NORMAL"
    # It only records: the loops may call it only when another hook acts (see Hook).
    defer_train_iter = True

    def __init__(self) -> None:
        self.time_sec_tot = 0.0
        self.time_sec_test_val = 0.0
        self.start_iter = 0
        self._last = time.perf_counter()
        # Validation runs inside training, measured (whole runs, best checkpoints included).
        self.val_runs = 0
        self.val_seconds = 0.0
        # Checkpoint saves outside validation, measured.
        self.saves = 0
        self.save_seconds = 0.0
        self._training = False
        self._val_started: float | None = None
        self._pass_started = 0.0
        # (saves, seconds) of the runner's save record already taken into account.
        self._saves_seen: tuple[int, float] = (0, 0.0)
        # The last training iterations whose data_time and time are in the message hub (the
        # loop calls this hook only where another hook is due; see record_skipped_steps).
        self._data_through = -1
        self._time_through = -1
        # (the runner's hook dispatch, its version, the hooks' saves_left): _save_counters.
        self._counters: tuple[Any, Any, list[Any]] | None = None
        # Whether _before_iter and _after_iter are this class's: the train iteration methods
        # then do their work inline (a subclass that overrides them has them called).
        self._own_iter_methods = keeps_methods(self, IterTimerHook, ("_before_iter", "_after_iter"))

    @property
    def writes_when_read(self) -> bool:
        """Whether the loop may skip this hook at a step where only hooks due at every step
        run, leaving its writes to the message hub's pending writer (write_pending): yes,
        unless a subclass has iteration methods of its own, which are then called."""
        return self._own_iter_methods and keeps_methods(
            self, IterTimerHook, ("before_train_iter", "after_train_iter")
        )

    # -- the run -------------------------------------------------------------------------------

    def before_train(self, runner: Any) -> None:
        # A resumed run estimates from its own iterations only.
        self.start_iter = runner.iter
        self._data_through = self._time_through = runner.iter - 1
        self.time_sec_tot = 0.0
        self._training = True
        self._saves_seen = checkpoint_saves(runner)[:2]

    def after_train(self, runner: Any) -> None:
        self._take_saves(runner, count=True)
        self._training = False

    def _take_saves(self, runner: Any, count: bool) -> None:
        """Take in the saves recorded since the last look: counted as checkpoint saves (or,
        inside validation, as part of its time); training's clock restarts when the last ended."""
        # checkpoint_saves(runner), inline: this runs twice a step where the hooks run at each.
        saves, seconds, ended_at = runner.message_hub.runtime_info.get(SAVES_KEY, _NO_SAVES)
        seen_saves, seen_seconds = self._saves_seen
        if saves == seen_saves:
            return
        self._saves_seen = (saves, seconds)
        if count:
            self.saves += saves - seen_saves
            self.save_seconds += seconds - seen_seconds
        self._last = max(self._last, ended_at)

    # -- validation inside training: a pause of the train clock -----------------------------------

    def before_val(self, runner: Any) -> None:
        if self._training:
            self._take_saves(runner, count=True)
            self._val_started = time.perf_counter()

    def after_val(self, runner: Any) -> None:
        if self._val_started is None:
            return
        now = time.perf_counter()
        self.val_runs += 1
        self.val_seconds += now - self._val_started
        self._val_started = None
        # Saves during validation (best checkpoints) are part of its time.
        self._take_saves(runner, count=False)
        self._last = now

    # -- epochs --------------------------------------------------------------------------------

    def _before_epoch(self, runner: Any, mode: str = "train") -> None:
        if mode == "train":
            self._take_saves(runner, count=True)
        self._last = time.perf_counter()
        self._pass_started = self._last

    def _after_epoch(self, runner: Any, mode: str = "train") -> None:
        self.time_sec_test_val = 0.0
        if mode in PASS_TIME_KEYS:
            now = time.perf_counter()
            runner.message_hub.update_info(
                PASS_TIME_KEYS[mode], now - self._pass_started, resumed=False
            )
            # The clock is read once per hook call, as MMEngine's is (tests patch it with a
            # counter): what follows is timed from here, not from the pass's last iteration.
            self._last = now

    # -- iterations ----------------------------------------------------------------------------

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: DATA_BATCH = None) -> None:
        self._take_saves(runner, count=True)
        iteration = runner.iter
        # Steps the loop ran without calling the hooks, not timed yet (record_skipped_steps
        # has nothing to do otherwise: the test is its own first one, without the calls).
        if self._time_through < iteration - 1 and step_records(runner) is not None:
            self.record_skipped_steps(runner, iteration)
        self._data_through = iteration
        if self._own_iter_methods:
            runner.message_hub.update_scalar(_TRAIN_DATA_TIME, time.perf_counter() - self._last)
        else:  # a subclass's _before_iter
            self._before_iter(runner, batch_idx, data_batch, "train")

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | Sequence | None = None,
    ) -> None:
        iteration = runner.iter
        if self._data_through < iteration or self._time_through < iteration - 1:
            # Steps skipped, or this one's before_train_iter: time them from the loop's stamps.
            self._time_skipped(runner, iteration)
        else:
            # The usual case, where every hook is due at every step: only a save since
            # before_train_iter (by a hook of a higher priority) to leave out.
            self._take_saves(runner, count=True)
        self._time_through = iteration
        if not self._own_iter_methods:  # a subclass's _after_iter
            self._after_iter(runner, batch_idx, data_batch, outputs, "train")
            return
        # _after_iter's work for training, inline: it runs at every step here.
        now = time.perf_counter()
        elapsed = now - self._last
        self._last = now
        hub = runner.message_hub
        hub.update_scalar(_TRAIN_TIME, elapsed)
        self.time_sec_tot += elapsed
        self._update_train_eta(hub, runner, iteration)

    def _time_skipped(self, runner: Any, iteration: int) -> None:
        """after_train_iter's catching up: the recorded steps before ``iteration`` not timed
        yet, and ``iteration``'s data time where its before_train_iter did not run."""
        steps = step_records(runner)
        if steps is None:
            return
        self._take_saves(runner, count=True)
        self.record_skipped_steps(runner, iteration)
        if self._data_through < iteration:
            # before_train_iter did not run at this iteration: its data time from the
            # loop's stamp.
            if steps and steps[-1][ITERATION] == iteration:
                data_time = steps[-1][FETCHED_AT] - self._last
                runner.message_hub.update_scalar(_TRAIN_DATA_TIME, data_time)
            self._data_through = iteration

    def record_skipped_steps(self, runner: Any, before: int) -> None:
        """Time the recorded steps before iteration ``before`` not timed yet, from the loop's
        stamps: the times the hook would have measured had it run at each (the loop calls it
        before the hooks of an iteration, so that every hook reads one entry per step)."""
        if self._time_through >= before - 1:
            return  # nothing skipped (steps_between's first test, without its call)
        steps = steps_between(runner, self._time_through, before)
        if steps is None:
            return
        # A save since the last call happened before the first of these steps.
        self._take_saves(runner, count=True)
        last = self._last
        data_times, times = [], []
        total = self.time_sec_tot
        for step in steps:
            if step[ITERATION] > self._data_through:
                data_times.append(step[FETCHED_AT] - last)
            elapsed = step[DONE_AT] - last
            times.append(elapsed)
            total += elapsed
            last = step[DONE_AT]
        self.time_sec_tot = total
        self._last = last
        self._time_through = self._data_through = steps[-1][ITERATION]
        # One call per key for all the steps: a call per step and key cost more than the
        # bookkeeping of the loop itself.
        hub = runner.message_hub
        time_key, data_key = _KEYS["train"]
        if data_times:
            hub.extend_scalar(data_key, data_times)
        hub.extend_scalar(time_key, times)

    def write_pending(self, runner: Any, before: int, fetched_at: float | None = None) -> None:
        """Write what the hook would have written by now had the loop called it at every step:
        the times of the recorded steps before iteration ``before`` and the ETA after the last
        of them, then, when ``fetched_at`` is given (``before``'s train_step is running, its
        batch in hand since then), its data time. The message hub's pending writer asks when
        something reads the hub between two iterations at which the hooks are due."""
        timed = self._time_through
        self.record_skipped_steps(runner, before)
        hub = runner.message_hub
        if self._time_through != timed:
            # Only here, not at every call of the hooks: their after_train_iter sets it there.
            self._update_train_eta(hub, runner, self._time_through)
        if fetched_at is not None and self._data_through < before:
            hub.update_scalar(_KEYS["train"][1], fetched_at - self._last)
            self._data_through = before

    def _before_iter(
        self, runner: Any, batch_idx: int, data_batch: DATA_BATCH = None, mode: str = "train"
    ) -> None:
        runner.message_hub.update_scalar(_KEYS[mode][1], time.perf_counter() - self._last)

    def _after_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | Sequence | None = None,
        mode: str = "train",
    ) -> None:
        now = time.perf_counter()
        elapsed = now - self._last
        self._last = now
        hub = runner.message_hub
        hub.update_scalar(_KEYS[mode][0], elapsed)
        if mode == "train":
            self.time_sec_tot += elapsed
        else:
            self.time_sec_test_val += elapsed
        self._update_eta(hub, runner, batch_idx, mode)

    # -- the estimate --------------------------------------------------------------------------

    def _update_eta(self, hub: Any, runner: Any, batch_idx: int, mode: str) -> None:
        if mode == "train":
            self._update_train_eta(hub, runner, runner.iter)
            return
        dataloader = runner.val_dataloader if mode == "val" else runner.test_dataloader
        done = batch_idx + 1
        left = len(dataloader) - batch_idx - 1
        hub.update_info("eta", self.time_sec_test_val / done * left if done > 0 else 0.0)

    def _update_train_eta(self, hub: Any, runner: Any, iteration: int) -> None:
        """The train ETA as after ``iteration``, from the iterations timed so far."""
        done = iteration - self.start_iter + 1
        left = runner.max_iters - iteration - 1
        eta = self.time_sec_tot / done * left if done > 0 else 0.0
        hub.update_info("eta", eta + self.pauses_left(runner))

    def pauses_left(self, runner: Any) -> float:
        """Seconds of validation runs and checkpoint saves still to come in training, at their
        mean measured durations (0 s for a kind not measured yet).

        Example:
            >>> from types import SimpleNamespace
            >>> IterTimerHook().pauses_left(SimpleNamespace(hooks=[]))
            0.0
        """
        seconds = 0.0
        if self.val_runs:
            loop = getattr(runner, "_train_loop", None)
            count = getattr(loop, "validations_left", None)
            if callable(count):
                seconds += count() * self.val_seconds / self.val_runs
        if self.saves:
            saves = 0
            for count in self._save_counters(runner):
                saves += count(runner)
            seconds += saves * self.save_seconds / self.saves
        return seconds

    def __getstate__(self) -> dict[str, Any]:
        # The cached saves_left methods belong to a runner's hooks, not to this hook: a copy
        # (or a pickle) of the hook leaves them out and looks them up again.
        state = dict(self.__dict__)
        state["_counters"] = None
        return state

    def _save_counters(self, runner: Any) -> list[Any]:
        """The ``saves_left`` methods of the runner's hooks. Where every hook runs at every
        step this is asked at each: the list is kept while the runner's hook dispatch table
        says its hooks are unchanged (its ``version``; a runner without one is looked over
        each time)."""
        dispatch = getattr(runner, "_dispatch", None)
        version = getattr(dispatch, "version", None)
        cached = self._counters
        if cached is not None and cached[0] is dispatch and cached[1] == version:
            return cached[2]
        counters = []
        for hook in getattr(runner, "hooks", ()):
            count = getattr(hook, "saves_left", None)
            if callable(count):
                counters.append(count)
        self._counters = (dispatch, version, counters) if version is not None else None
        return counters
