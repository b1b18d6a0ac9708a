"""``IterTimerHook``: how long each iteration and its data loading take, and the ETA."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..registry import HOOKS
from ..utils.train_steps import DONE_AT, FETCHED_AT, recorded_steps
from .hook import DATA_BATCH, Hook

# The message hub keys of each loop, formatted once rather than on every step.
_KEYS = {mode: (f"{mode}/time", f"{mode}/data_time") for mode in ("train", "val", "test")}


@HOOKS.register_module()
class IterTimerHook(Hook):
    """Puts ``<mode>/time`` (a whole iteration, data loading included) and ``<mode>/data_time``
    (waiting for the batch) in the message hub after each iteration of every loop, and the
    estimated seconds left of the current loop as the runtime info ``eta``.

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

    def before_train(self, runner: Any) -> None:
        # A resumed run estimates from its own iterations only.
        self.start_iter = runner.iter
        self.time_sec_tot = 0.0

    def _before_epoch(self, runner: Any, mode: str = "train") -> None:
        self._last = time.perf_counter()

    def _after_epoch(self, runner: Any, mode: str = "train") -> None:
        self.time_sec_test_val = 0.0

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: DATA_BATCH = None) -> None:
        if not getattr(getattr(runner, "_train_loop", None), "records_steps", False):
            self._before_iter(runner, batch_idx, data_batch, "train")
        # else the loop stamps each step; after_train_iter reads the stamps.

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | Sequence | None = None,
    ) -> None:
        steps = recorded_steps(runner)
        if steps is None:
            self._after_iter(runner, batch_idx, data_batch, outputs, "train")
            return
        # The steps since the hooks last ran, from the loop's stamps: the same times as if the
        # hook had read the clock at each of them.
        hub = runner.message_hub
        time_key, data_key = _KEYS["train"]
        last = self._last
        for step in steps:
            hub.update_scalar(data_key, step[FETCHED_AT] - last)
            hub.update_scalar(time_key, step[DONE_AT] - last)
            self.time_sec_tot += step[DONE_AT] - last
            last = step[DONE_AT]
        self._last = last
        self._update_eta(hub, runner, batch_idx, "train")

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

    def _update_eta(self, hub: Any, runner: Any, batch_idx: int, mode: str) -> None:
        if mode == "train":
            iteration = runner.iter
            done = iteration - self.start_iter + 1
            left = runner.max_iters - iteration - 1
        else:
            dataloader = runner.val_dataloader if mode == "val" else runner.test_dataloader
            done = batch_idx + 1
            left = len(dataloader) - batch_idx - 1
        total = self.time_sec_tot if mode == "train" else self.time_sec_test_val
        hub.update_info("eta", total / done * left if done > 0 else 0.0)
