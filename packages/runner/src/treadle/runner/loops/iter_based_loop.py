"""``IterBasedTrainLoop``: training for a number of iterations, the data read endlessly."""

from __future__ import annotations

import logging
import math
from typing import Any

import torch

from treadle.logging import print_log
from treadle.runner.registry import LOOPS

from .data_position import stateful_sampler
from .dataloader_iterator import LoopBatches
from .device_prefetch import prefetched
from .train_loop import TrainLoopBase, _check_int


@LOOPS.register_module()
class IterBasedTrainLoop(TrainLoopBase):
    """Train for ``max_iters`` iterations, validating every ``val_interval`` of them.

    The whole run is one epoch for the hooks (``before_train_epoch`` once at the start). The
    dataloader is read pass after pass: with ``InfiniteSampler`` one endless pass; with a finite
    sampler each pass ends, the next starts with ``set_epoch(pass)``.

    Args:
        runner: the runner.
        dataloader: a DataLoader or its config.
        max_iters: how many iterations to train.
        val_begin: the first iteration after which validation may run.
        val_interval: validate after every this many iterations (and after the last).
        dynamic_intervals: ``[(milestone, interval), ...]``: from each milestone iteration on,
            validate every ``interval`` iterations.
        skip_nonfinite_loss: drop a batch whose loss is NaN/inf instead of stopping with
            :class:`NonFiniteLossError`.
        nonfinite_check_interval: without skipping, look for NaN/inf losses every this many
            iterations (and before checkpoints and validation).
        nonfinite_loss: what a NaN/inf loss does: 'stop' (the default), 'skip' (the batch, as
            ``skip_nonfinite_loss=True``) or 'rollback' (weights and optimizer state back to
            the last checkpoint, at most ``max_rollbacks`` times).

    A run resumed from a checkpoint continues with the very next batch (the sampler's saved
    position, no batches re-read) and the same random numbers.

    Example:
        >>> train_cfg = dict(type='IterBasedTrainLoop', max_iters=10000, val_interval=1000)
        >>> runner = Runner(..., train_cfg=train_cfg)  # doctest: +SKIP
    """

    _by_epoch = False

    def __init__(
        self,
        runner: Any,
        dataloader: Any,
        max_iters: int,
        val_begin: int = 1,
        val_interval: int = 1000,
        dynamic_intervals: list[tuple[int, int]] | None = None,
        skip_nonfinite_loss: bool = False,
        nonfinite_check_interval: int = 50,
        nonfinite_loss: str | None = None,
        max_rollbacks: int = 3,
    ) -> None:
        super().__init__(
            runner,
            dataloader,
            val_begin,
            val_interval,
            dynamic_intervals,
            skip_nonfinite_loss,
            nonfinite_check_interval,
            nonfinite_loss,
            max_rollbacks,
        )
        self._max_iters = _check_int("max_iters", max_iters, 0)
        # One epoch for the hooks, as MMEngine's.
        self._max_epochs = 1
        self._restart_warned = False
        # As MMEngine's loop, the iterator is made now, when the loop is built: making it
        # draws the workers' base seed from torch's global generator, and the Runner builds
        # the loop before initialising the weights, so a fresh run starts from MMEngine's
        # weights. run() uses it unless a resume moves the sampler first.
        self._iterator: Any = None
        if getattr(runner, "_resume", False):
            # A run that resumes moves the sampler before it reads: made now, the iterator's
            # workers would start and read ahead from the pass's first (trained) batches, to
            # be dropped. Draw its number only (the same global stream); run() makes it.
            generator = getattr(self.dataloader, "generator", None)
            torch.empty((), dtype=torch.int64).random_(generator=generator)
        else:
            self._iterator = self._open_iterator()

    def _resume_point(self) -> tuple[dict[str, Any] | None, dict[str, Any] | None, int]:
        """(sampler state, generators, batches to replay) for the run's start."""
        pending = self._take_pending()
        if pending is not None:
            self._data_pass = int(pending.get("data_pass", 0))
            done, sampler_state = int(pending["batch_idx"]), pending.get("sampler")
            if sampler_state is None and done:
                # The sampler cannot say where it stands: load the pass's done batches
                # (next(self) counts them) rather than train them again as new ones.
                self._batches_in_pass = self._batches_at_open = 0
                return None, pending.get("rng"), done
            self._batches_in_pass = self._batches_at_open = done
            return sampler_state, pending.get("rng"), 0
        if self._iter == 0:
            return None, None, 0
        # Counters set without a loop state (a checkpoint of MMEngine's): find the position
        # from the iteration count.
        sampler = stateful_sampler(self.dataloader)
        endless = sampler is not None and type(sampler).__name__ == "InfiniteSampler"
        if endless:
            self._data_pass, done = 0, self._iter
        else:
            self._data_pass, done = divmod(self._iter, len(self.dataloader))
        self._batches_in_pass = self._batches_at_open = done
        sampler_state = self._position_without_state(done, self._data_pass)
        if sampler_state is None:
            self._data_pass, self._batches_in_pass = 0, 0
            self._batches_at_open = 0
            return None, None, self._iter
        return sampler_state, None, 0

    def run(self) -> Any:
        """Train until ``max_iters`` (or until a hook sets ``stop_training``); returns the
        model."""
        runner = self.runner
        sampler_state, generators, replay = self._resume_point()
        runner.call_hook("before_train")
        runner.call_hook("before_train_epoch")
        # After the hooks: DistSamplerSeedHook sets epoch 0, the saved state the pass it was in.
        sampler_state, dropped, worker_states = self._worker_plan(
            generators, sampler_state, bool(replay)
        )
        self._load_sampler(sampler_state)
        if self._iterator is None or sampler_state is not None or replay or self._iter:
            self._iterator = self._open_iterator(worker_states)
        for _ in range(dropped):
            next(self._iterator)
        if replay:
            self._replay(self, replay)
        # Each batch copied to the device ahead of its step, where that pays (device_prefetch).
        self._iterator = prefetched(self, self._iterator)
        if generators is not None:
            self._restore_generators(generators)
        runner.model.train()
        optim_wrapper = self._step_optim_wrapper()
        if self._iter_hooks is None:
            while self._iter < self._max_iters and not self.stop_training:
                data_batch = next(self)
                self._train_step(self._iter, data_batch, optim_wrapper)
                self._validate_if_due(self._iter, self._max_iters)
        else:
            self._run_recorded(optim_wrapper)
        # Stop the DataLoader's workers now (an endless sampler never ends their pass).
        self._iterator = None
        self._loss_watch.check()
        runner.call_hook("after_train_epoch")
        runner.call_hook("after_train")
        return runner.model

    def _run_recorded(self, optim_wrapper: Any) -> None:
        """The steps, with the iteration hooks called where one is due and where validation
        may follow (so that what they record is complete when it runs)."""
        hooks = self._iter_hooks
        hooks.refresh(self._iter, self._iter)
        due = self._next_due(hooks.due, self._next_checkpoint_of_state())
        self._start_recording()
        try:
            while self._iter < self._max_iters and not self.stop_training:
                data_batch = next(self)
                if self._recorded_step(self._iter, self._iter, data_batch, optim_wrapper, due):
                    self._validate_if_due(self._iter, self._max_iters)
                    due = self._next_due(hooks.due, self._next_checkpoint_of_state())
        finally:
            self._stop_recording()

    def _next_checkpoint_of_state(self) -> int:
        """The next iteration after which validation may run or training ends: the hooks run
        there even when none is due. Validation follows a multiple of the interval in force;
        every interval (dynamic ones included) is a multiple of their gcd."""
        iteration = self._iter
        last = self._max_iters - 1
        if self.runner.val_loop is None:
            return last
        progress = max(iteration + 1, self.val_begin)
        step = math.gcd(*self.dynamic_intervals)
        progress += -progress % step
        return min(last, progress - 1)

    @property
    def dataloader_iterator(self) -> LoopBatches:
        """The train batches without end, read through this loop (MMEngine's attribute, which
        custom loops read with ``next(self.dataloader_iterator)``)."""
        batches = self.__dict__.get("_batches")
        if batches is None:
            batches = self.__dict__["_batches"] = LoopBatches(self)
        return batches

    def run_iter(self, data_batch: Any) -> None:
        """Train on one batch."""
        self._train_step(self._iter, data_batch, self.runner.optim_wrapper)

    def __next__(self) -> Any:
        """The next batch; a pass that ends is followed by the next one."""
        try:
            data_batch = next(self._iterator)
        except StopIteration:
            self._data_pass += 1
            if not self._restart_warned:
                self._restart_warned = True
                print_log(
                    "the train dataloader reached its end and starts again (pass "
                    f"{self._data_pass + 1}); InfiniteSampler reads endlessly without "
                    "restarting the DataLoader's workers",
                    logger="current",
                    level=logging.INFO,
                )
            self._set_sampler_epoch(self._data_pass)
            self._pass_start = 0
            self._batches_in_pass = self._batches_at_open = 0
            self._iterator = prefetched(self, self._open_iterator())
            data_batch = next(self._iterator)
        self._batches_in_pass += 1
        return data_batch

    def _set_sampler_epoch(self, data_pass: int) -> None:
        for sampler in (
            getattr(self.dataloader, "sampler", None),
            getattr(getattr(self.dataloader, "batch_sampler", None), "sampler", None),
        ):
            if hasattr(sampler, "set_epoch"):
                sampler.set_epoch(data_pass)
                return
