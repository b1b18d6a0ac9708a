"""``EpochBasedTrainLoop``: training in whole passes over the train dataloader."""

from __future__ import annotations

from typing import Any

from treadle.runner.registry import LOOPS

from .device_prefetch import prefetched
from .train_loop import AFTER_EPOCH, IDLE, TrainLoopBase, _check_int


@LOOPS.register_module()
class EpochBasedTrainLoop(TrainLoopBase):
    """Train for ``max_epochs`` epochs, validating after some of them.

    Args:
        runner: the runner.
        dataloader: a DataLoader or its config.
        max_epochs: how many epochs to train.
        val_begin: the first epoch after which validation may run.
        val_interval: validate after every this many epochs (and after the last).
        dynamic_intervals: ``[(milestone, interval), ...]``: from each milestone epoch on,
            validate every ``interval`` epochs.
        skip_nonfinite_loss: drop a batch whose loss is NaN/inf instead of stopping with
            :class:`NonFiniteLossError` (checks each step's loss: one device sync a step).
        nonfinite_check_interval: without skipping, look for NaN/inf losses every this many
            iterations (and before checkpoints, validation and each epoch's end).
        nonfinite_loss: what a NaN/inf loss does: 'stop' (the default), 'skip' (the batch, as
            ``skip_nonfinite_loss=True``) or 'rollback' (weights and optimizer state back to
            the last checkpoint, at most ``max_rollbacks`` times).

    ``state_dict()``/``load_state_dict()`` save and restore the exact position: a run resumed
    from a checkpoint written mid-epoch continues with the next batch of that epoch.

    Example:
        >>> train_cfg = dict(type='EpochBasedTrainLoop', max_epochs=12, val_interval=2)
        >>> runner = Runner(..., train_cfg=train_cfg)  # doctest: +SKIP
    """

    def __init__(
        self,
        runner: Any,
        dataloader: Any,
        max_epochs: int,
        val_begin: int = 1,
        val_interval: int = 1,
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
        self._max_epochs = _check_int("max_epochs", max_epochs, 0)
        self._max_iters = self._max_epochs * len(self.dataloader)

    def run(self) -> Any:
        """Train until ``max_epochs`` (or until a hook sets ``stop_training``); returns the
        model."""
        runner = self.runner
        runner.call_hook("before_train")
        self._optim_wrapper = self._step_optim_wrapper()
        while self._epoch < self._max_epochs and not self.stop_training:
            self.run_epoch()
            self._validate_if_due(self._epoch, self._max_epochs)
        self._loss_watch.check()
        runner.call_hook("after_train")
        return runner.model

    def _resume_point(self) -> tuple[int, dict[str, Any] | None, dict[str, Any] | None, bool]:
        """(batches done in this epoch, sampler state, generators, replay needed)."""
        pending = self._take_pending()
        if pending is not None:
            done, sampler_state = pending["batch_idx"], pending.get("sampler")
            # No sampler state: the sampler cannot say where it stands, so only loading the
            # batches done finds the position (else the epoch would start over, miscounted).
            return done, sampler_state, pending.get("rng"), sampler_state is None and done > 0
        # Counters set without a loop state (a checkpoint of MMEngine's): the batches done in
        # this epoch follow from the iteration count.
        done = self._iter - self._epoch * len(self.dataloader)
        if 0 < done < len(self.dataloader):
            sampler_state = self._position_without_state(done, self._epoch)
            return done, sampler_state, None, sampler_state is None
        return 0, None, None, False

    def _run_recorded(self, iterator: Any, optim_wrapper: Any, done: int) -> None:
        """The epoch's steps, with the iteration hooks called where one is due and at the
        epoch's last step (so that what they record is complete when the epoch ends)."""
        hooks = self._iter_hooks
        hooks.refresh(self._iter, done)
        try:
            last = self._iter + len(self.dataloader) - 1 - done
        except TypeError:  # no length: the hooks run at every step
            last = -1
        due = self._next_due(hooks.due, last)
        self._start_recording()
        try:
            for data_batch in iterator:
                batch_idx = self._batches_in_pass
                self._batches_in_pass = batch_idx + 1
                if self._recorded_step(self._iter, batch_idx, data_batch, optim_wrapper, due):
                    due = self._next_due(hooks.due, last)
        finally:
            self._stop_recording()

    def run_epoch(self) -> None:
        """Train one epoch (its rest, when resumed mid-epoch)."""
        runner = self.runner
        done, sampler_state, generators, replay = self._resume_point()
        if generators is not None and done == 0:
            self._restore_generators(generators)
        sampler_state, dropped, worker_states = self._worker_plan(generators, sampler_state, replay)
        self._load_sampler(sampler_state)
        runner.call_hook("before_train_epoch")
        runner.model.train()
        iterator = self._open_iterator(worker_states)
        for _ in range(dropped):
            next(iterator)
        if replay:
            self._replay(iterator, done)
        # Each batch copied to the device ahead of its step, where that pays (device_prefetch).
        iterator = prefetched(self, iterator)
        if generators is not None and done:
            self._restore_generators(generators)
        self._batches_in_pass = self._batches_at_open = done
        optim_wrapper = getattr(self, "_optim_wrapper", None) or runner.optim_wrapper
        if self._iter_hooks is None:
            for data_batch in iterator:
                batch_idx = self._batches_in_pass
                self._batches_in_pass = batch_idx + 1
                self._train_step(batch_idx, data_batch, optim_wrapper)
        else:
            self._run_recorded(iterator, optim_wrapper, done)
        self._loss_watch.check()
        self._phase = AFTER_EPOCH
        runner.call_hook("after_train_epoch")
        self._phase = IDLE
        self._epoch += 1
        self._batches_in_pass = self._batches_at_open = 0
        self._pass_start = 0

    def run_iter(self, idx: int, data_batch: Any) -> None:
        """Train on one batch (``idx`` is its index in the epoch)."""
        optim_wrapper = getattr(self, "_optim_wrapper", None) or self.runner.optim_wrapper
        self._train_step(idx, data_batch, optim_wrapper)
