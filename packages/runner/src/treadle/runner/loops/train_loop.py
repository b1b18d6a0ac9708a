"""What the two train loops share: validation scheduling, the loss watch and exact resume.

The state of a train loop (``state_dict()``) says where training stands as the position of the
*next* batch: epoch, iteration, batches done in the current pass over the data, the train
sampler's state at that point (its ``position`` counts the samples training used, not those
the DataLoader read ahead) and every random generator. Saved from an ``after_train_iter`` or
``after_train_epoch`` hook (where checkpoints are written) it counts the step or the epoch
that hook belongs to as done, like the ``epoch``/``iter`` of MMEngine's checkpoint meta.

``load_state_dict(state)`` sets the counters at once; the sampler and the generators are put
back by ``run()`` at the point of the loop the state describes: the generators right before
the next batch is drawn (after the DataLoader iterator is made, since making one draws from
torch's generator), or before the ``before_train_epoch`` hooks when the state is at an epoch
boundary. Validation inside training runs with the generators saved and put back around it,
so it draws nothing from the training streams: a resumed run, which does not repeat the
validation that followed its checkpoint, draws the same numbers as the uninterrupted one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from time import perf_counter
from typing import Any

from treadle.dist import get_dist_info
from treadle.logging import print_log

from ..checkpoint.state import tensors_to_cpu
from .base_loop import BaseLoop
from .data_position import batches_to_samples, consumed_samples, stateful_sampler
from .dynamic_intervals import calc_dynamic_intervals, interval_at
from .elastic_step import ElasticStep, elastic_plan_of
from .iter_hooks import TrainIterHooks
from .nonfinite import LossWatch, SkipNonFiniteOptimWrapper, check_action
from .nonfinite_rollback import Rollback
from .pending_steps import PendingSteps
from .rank_agreement import RankAgreement
from .rank_rng import gather_rng_states, pick_rng_state, reseed_for_rank
from .rng_state import capture_rng_state, restore_rng_state
from .schedule_runs import validations_left
from .worker_streams import WorkerStreams, resume_plan

# Where the loop is when state_dict() is called: the step or epoch of the running
# after_train_iter / after_train_epoch hooks counts as done.
IDLE, AFTER_ITER, AFTER_EPOCH = 0, 1, 2


def _check_int(name: str, value: Any, minimum: int) -> int:
    """``value`` as an int; a whole float (``12.0``) is accepted, as MMEngine does."""
    whole = isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    if isinstance(value, bool) or not whole:
        raise TypeError(f"train_cfg {name} must be an int, got {type(value).__name__}: {value!r}")
    if value < minimum:
        raise ValueError(f"train_cfg {name} must be >= {minimum}, got {value}")
    return int(value)


class TrainLoopBase(BaseLoop):
    """The base of :class:`EpochBasedTrainLoop` and :class:`IterBasedTrainLoop`."""

    # Whether the position is told as epoch and batch (messages of the loss watch).
    _by_epoch = True

    def __init__(
        self,
        runner: Any,
        dataloader: Any,
        val_begin: int,
        val_interval: int,
        dynamic_intervals: Any,
        skip_nonfinite_loss: bool,
        nonfinite_check_interval: int,
        nonfinite_loss: str | None = None,
        max_rollbacks: int = 3,
    ) -> None:
        super().__init__(runner, dataloader)
        self._epoch = 0
        self._iter = 0
        self.val_begin = _check_int("val_begin", val_begin, 0)
        self.val_interval = _check_int("val_interval", val_interval, 1)
        # EarlyStoppingHook sets this to end training after the current epoch/iteration.
        self.stop_training = False
        self.dynamic_milestones, self.dynamic_intervals = calc_dynamic_intervals(
            self.val_interval, dynamic_intervals
        )
        # 'stop', 'skip' or 'rollback' (train_cfg nonfinite_loss, see nonfinite.py).
        self.nonfinite_loss = check_action(nonfinite_loss, skip_nonfinite_loss)
        self.skip_nonfinite_loss = self.nonfinite_loss == "skip"
        on_error = None
        if self.nonfinite_loss == "rollback":
            on_error = Rollback(self, max_rollbacks)
        # Where the ranks agree on non-finite losses and preemption (rank_agreement.py).
        self.rank_agreement = RankAgreement()
        self._loss_watch = LossWatch(nonfinite_check_interval, on_error, self.rank_agreement)
        self._check_not_empty()
        self._share_dataset_meta(runner.visualizer, purpose="visualizer")
        # The random streams of the DataLoader's workers (None without workers): a resume
        # that reads no trained batch hands them to the new workers. An elastic loader seeds
        # each sample from its key instead (dataset/sample_seeding.py): nothing to record.
        elastic = elastic_plan_of(self.dataloader) is not None
        self._worker_streams = None if elastic else WorkerStreams.attach(self.dataloader)
        # The step of an elastic run (accumulation, losses averaged over ranks), or None.
        self._elastic_step = ElasticStep.of(runner, self.dataloader)
        self._phase = IDLE
        # Batches taken from the current pass over the data, and the sampler position the
        # pass started at (not 0 when it was resumed).
        self._batches_in_pass = 0
        self._pass_start = 0
        # _batches_in_pass when the current iterator was made (the resumed batch count).
        self._batches_at_open = 0
        self._data_pass = 0
        # What load_state_dict gave, applied by run() at the right point of the loop.
        self._pending: dict[str, Any] | None = None
        self._reseed_rank: int | None = None
        # The iteration hooks, called only where one is due (None: a runner without a hook
        # dispatch table, whose hooks are called at every iteration).
        self._iter_hooks = TrainIterHooks.of(runner)
        # While run() calls the hooks only where due, it records each step here
        # (treadle.runner.utils.train_steps says what a record holds).
        self.records_steps = False
        self.steps_since_hooks: list[tuple] = []
        # How many of those the loss watch holds already (those of light steps).
        self._steps_watched = 0
        # The host clock when the batch of the running step was in hand, at a step whose hooks
        # are skipped (None at others): the message hub's pending writer tells from it that a
        # train_step is running (pending_steps.py).
        self.step_fetched_at: float | None = None
        self._pending_steps: PendingSteps | None = None
        # The generators of training while validation inside it runs (see _validate_if_due).
        self._generators_outside_val: dict[str, Any] | None = None
        self._samples_dropped = 0

    def _check_not_empty(self) -> None:
        try:
            length = len(self.dataloader)
        except TypeError:  # an iterable dataset without a length
            return
        if length == 0:
            dataset = getattr(self.dataloader, "dataset", None)
            size = len(dataset) if hasattr(dataset, "__len__") else "?"
            batch_size = getattr(self.dataloader, "batch_size", None)
            drop_last = getattr(self.dataloader, "drop_last", None)
            raise ValueError(
                f"the train dataloader has no batches: its dataset {type(dataset).__name__} "
                f"has {size} samples (batch_size={batch_size}, drop_last={drop_last}); check "
                f"train_dataloader.dataset"
            )

    @property
    def max_epochs(self) -> int:
        """Total epochs of training."""
        return self._max_epochs

    @property
    def max_iters(self) -> int:
        """Total iterations of training."""
        return self._max_iters

    @property
    def epoch(self) -> int:
        """The current epoch (the number of epochs done)."""
        return self._epoch

    @property
    def iter(self) -> int:
        """The current iteration (the number of iterations done)."""
        return self._iter

    def validations_left(self) -> int:
        """How many validation runs are still to come, the one after the epoch (or
        iteration) in progress included (the train ETA counts them; see schedule_runs)."""
        if self.runner.val_loop is None:
            return 0
        if self._by_epoch:
            done, last = self._epoch, self._max_epochs
        else:
            done, last = self._iter, self._max_iters
        return validations_left(
            done, last, self.val_begin, self.dynamic_milestones, self.dynamic_intervals
        )

    # -- one step -------------------------------------------------------------------------

    def _step_optim_wrapper(self) -> Any:
        """The optimizer wrapper the steps use (called as training starts)."""
        if self._elastic_step is not None:
            self._elastic_step.prepare(self.runner.optim_wrapper, self._iter, self._max_iters)
        if not self.skip_nonfinite_loss:
            return self.runner.optim_wrapper
        return SkipNonFiniteOptimWrapper(
            self.runner.optim_wrapper,
            lambda: f"iteration {self._iter + 1}",
            agreement=self.rank_agreement,
            iteration=lambda: self._iter + 1,
        )

    def _train_step(self, batch_idx: int, data_batch: Any, optim_wrapper: Any) -> None:
        runner = self.runner
        runner.call_hook("before_train_iter", batch_idx=batch_idx, data_batch=data_batch)
        elastic = self._elastic_step
        if elastic is None:
            outputs = runner.model.train_step(data_batch, optim_wrapper=optim_wrapper)
        else:
            outputs = elastic(data_batch, optim_wrapper)
        if not self.skip_nonfinite_loss:
            self._loss_watch.add(
                outputs, self._iter, self._epoch if self._by_epoch else None, batch_idx
            )
        self._phase = AFTER_ITER
        runner.call_hook(
            "after_train_iter", batch_idx=batch_idx, data_batch=data_batch, outputs=outputs
        )
        self._phase = IDLE
        self._iter += 1

    def _start_recording(self) -> None:
        """Record each step from now on, and have the message hub ask for what the recording
        hooks skipped whenever something reads it (pending_steps.py)."""
        self.records_steps = True
        self.steps_since_hooks.clear()
        self._steps_watched = 0
        self.step_fetched_at = None
        self._pending_steps = PendingSteps(self, self._iter_hooks)
        self._runner.message_hub.pending_writer = self._pending_steps

    def _stop_recording(self) -> None:
        hub = self._runner.message_hub
        if hub.pending_writer is self._pending_steps:
            hub.pending_writer = None
        self._pending_steps = None
        self.records_steps = False

    def _next_due(self, hooks_due: float, forced: int) -> float:
        """The next iteration at which the hooks run: the first one due, ``forced`` (where the
        loop needs what the hooks record), or where the loss watch is due a check."""
        due = min(hooks_due, forced)
        if not self.skip_nonfinite_loss:
            due = min(due, self._loss_watch.next_check(self._iter))
        return due

    def _recorded_step(
        self, iteration: int, batch_idx: int, data_batch: Any, optim_wrapper: Any, due: float
    ) -> bool:
        """One step with the iteration hooks called only if ``iteration`` is ``due`` (else, at
        a light step, only the user hooks due at every step); returns whether they were, or
        whether the hooks changed (the caller then asks ``self._iter_hooks.due`` for the next)."""
        fetched = perf_counter()
        runner = self._runner
        hooks = self._iter_hooks
        hub = runner.message_hub
        called = iteration >= due
        if called:
            # The hooks write this step as they go: a read finds nothing pending until it ends.
            hub.pending_writer = None
            hooks.call_before(iteration, batch_idx, data_batch)
        else:
            self.step_fetched_at = fetched
        # After the hooks: one of a higher priority than RuntimeInfoHook reads the last
        # iteration there, as in MMEngine; train_step reads this one.
        hub.update_info("iter", iteration)
        elastic = self._elastic_step
        if elastic is None:
            outputs = runner.model.train_step(data_batch, optim_wrapper=optim_wrapper)
        else:
            outputs = elastic(data_batch, optim_wrapper)
        steps = self.steps_since_hooks
        steps.append((iteration, batch_idx, fetched, perf_counter(), outputs))
        if called:
            if not self.skip_nonfinite_loss:
                # The loss watch takes the steps' losses here, before any hook may save a
                # checkpoint (which checks them first).
                watched = self._steps_watched  # those of light steps are held already
                self._loss_watch.add_steps(
                    steps[watched:] if watched else steps, self._epoch if self._by_epoch else None
                )
            self._phase = AFTER_ITER
            hooks.call_after(iteration, batch_idx, data_batch, outputs)
            self._phase = IDLE
            steps.clear()
            self._steps_watched = 0
            self.step_fetched_at = None
            hub.pending_writer = self._pending_steps
        elif hooks.light:
            called = self._light_step(iteration, batch_idx, data_batch, outputs)
        self._iter = iteration + 1
        return called

    def _light_step(self, iteration: int, batch_idx: int, data_batch: Any, outputs: Any) -> bool:
        """The hooks due at every step (only after_train_iter), without the recording hooks,
        whose writes the message hub's pending writer makes when a hook reads the hub (see
        TrainIterHooks.call_light); returns whether the hooks changed."""
        if not self.skip_nonfinite_loss:
            # Held now, not at the next call of every hook: a hook saving a checkpoint here
            # checks this step's loss first.
            self._loss_watch.add(
                outputs, iteration, self._epoch if self._by_epoch else None, batch_idx
            )
            self._steps_watched = len(self.steps_since_hooks)
        self._phase = AFTER_ITER
        try:
            return self._iter_hooks.call_light(
                iteration, batch_idx, data_batch, outputs, self._pending_steps
            )
        finally:
            self._phase = IDLE

    # -- validation -----------------------------------------------------------------------

    def _validate_if_due(self, progress: int, last: int) -> None:
        """Run the val loop after epoch/iteration ``progress`` when it is due (MMEngine's
        rule: from ``val_begin`` on, every ``val_interval``, and at the end)."""
        self.val_interval = interval_at(
            self.dynamic_milestones, self.dynamic_intervals, progress + 1
        )
        val_loop = self.runner.val_loop
        if val_loop is None or progress < self.val_begin:
            return
        if progress % self.val_interval and progress != last:
            return
        self._loss_watch.check()
        generators = capture_rng_state()
        # A checkpoint written during validation (save_best) holds these: training goes on
        # from them, not from what validation drew.
        self._generators_outside_val = generators
        try:
            val_loop.run()
        finally:
            self._generators_outside_val = None
            restore_rng_state(generators)
        self.runner.model.train()

    # -- data -----------------------------------------------------------------------------

    def _load_sampler(self, sampler_state: Mapping[str, Any] | None) -> None:
        """Put the train sampler where ``sampler_state`` says; the next iterator over the
        dataloader starts there. The epoch loop calls it before the ``before_train_epoch``
        hooks (DistSamplerSeedHook's ``set_epoch`` then acts on it as in the uninterrupted
        run), the iteration loop after them (its hooks set epoch 0 once, not the saved pass)."""
        sampler = stateful_sampler(self.dataloader)
        self._pass_start = 0
        if sampler_state is not None and sampler is not None:
            sampler.load_state_dict(dict(sampler_state))
            # Batches a resume reads again and drops (see _worker_plan) count as before.
            self._pass_start = sampler_state["position"] + self._samples_dropped
        self._samples_dropped = 0

    def _open_iterator(self, worker_states: Any = None) -> Any:
        """A new iterator over the train dataloader (its workers starting from
        ``worker_states`` when a resume gives them)."""
        streams = self._worker_streams
        if streams is None:
            return iter(self.dataloader)
        return streams.open(self.dataloader, worker_states)

    def _worker_plan(
        self, generators: Any, sampler_state: Any, replay: bool
    ) -> tuple[Any, int, Any]:
        """(sampler state, batches to drop, the workers' starting states) for a resume:
        the sampler moved back to the last round of worker batches before the checkpoint,
        whose few batches the new workers (given the saved streams) read again and the loop
        drops, so random transforms in the workers draw what the uninterrupted run drew."""
        saved = generators.get("workers") if isinstance(generators, Mapping) else None
        if saved is None or replay or sampler_state is None:
            return sampler_state, 0, None
        sampler_state = dict(sampler_state)
        position = sampler_state.get("position")
        skip, states = resume_plan(self._worker_streams, saved, self.dataloader, sampler_state)
        self._samples_dropped = 0 if position is None else position - sampler_state["position"]
        return sampler_state, skip, states

    def _sampler_state(self, batches: int, next_epoch: bool) -> dict[str, Any] | None:
        sampler = stateful_sampler(self.dataloader)
        if sampler is None:
            return None
        state = dict(sampler.state_dict())
        if next_epoch:
            # The next epoch starts from its beginning; set_epoch picks its order.
            state["position"] = 0
        else:
            state["position"] = consumed_samples(
                self.dataloader, sampler, self._pass_start, batches - self._batches_at_open
            )
        return state

    def _replay(self, iterator: Any, batches: int) -> None:
        """Skip ``batches`` batches by loading them: the way when the sampler cannot say
        where it stands."""
        print_log(
            f"the train sampler cannot save its position: skipping the {batches} batch(es) "
            f"already trained by loading them; use DefaultSampler or InfiniteSampler to "
            f"resume without reading them",
            logger="current",
            level=logging.WARNING,
        )
        for _ in range(batches):
            next(iterator)

    def _position_without_state(self, batches: int, data_pass: int) -> dict[str, Any] | None:
        """A sampler state for resuming a checkpoint without a loop state (MMEngine's): the
        position follows from the batch count when batches have a fixed size."""
        sampler = stateful_sampler(self.dataloader)
        samples = batches_to_samples(self.dataloader, batches)
        if sampler is None or samples is None:
            return None
        state = dict(sampler.state_dict())
        state["position"] = samples
        if "epoch" in state:
            state["epoch"] = data_pass
        return state

    # -- state ----------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """Where training stands (see the module's docstring); checks the held losses first,
        so no checkpoint is written past a NaN loss."""
        # Rank 0 alone may call it (it builds the checkpoint): no collective here; in a save,
        # the ranks checked together just before (gather_rng_states).
        self._loss_watch.check(agree=False)
        epoch, iteration, batches = self._epoch, self._iter, self._batches_in_pass
        next_epoch = self._phase == AFTER_EPOCH
        if self._phase == AFTER_ITER:
            iteration += 1
        elif next_epoch:
            epoch, batches = epoch + 1, 0
        rank, world_size = get_dist_info()
        return {
            "type": type(self).__name__,
            "epoch": epoch,
            "iter": iteration,
            "batch_idx": batches,
            "data_pass": self._data_pass,
            "sampler": self._sampler_state(batches, next_epoch),
            "rng": self._current_generators(next_epoch),
            "rank": rank,
            "world_size": world_size,
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from ``state``: the counters now, the data and the generators in ``run()``."""
        if not isinstance(state, Mapping):
            raise TypeError(
                f"{type(self).__name__}.load_state_dict needs a dict, got {type(state).__name__}"
            )
        saved_type = state.get("type", type(self).__name__)
        if saved_type != type(self).__name__:
            raise ValueError(
                f"the checkpoint's loop state was saved by a {saved_type}, but train_cfg builds "
                f"a {type(self).__name__}: resume with the train_cfg of the interrupted run"
            )
        missing = [key for key in ("epoch", "iter", "batch_idx") if key not in state]
        if missing:
            raise KeyError(
                f"the loop state has no {', '.join(map(repr, missing))} (its keys: {sorted(state)})"
            )
        self._epoch = int(state["epoch"])
        self._iter = int(state["iter"])
        # Generator and sampler states are host tensors, but a resume maps the checkpoint to
        # the training device (map_location="default"): bring them back before any is applied.
        pending = tensors_to_cpu(state)
        diff_rank_seed = bool(getattr(self.runner, "_randomness_cfg", {}).get("diff_rank_seed"))
        pending["rng"], self._reseed_rank = pick_rng_state(pending, diff_rank_seed)
        pending.pop("rng_per_rank", None)
        self._pending = pending

    def _restore_generators(self, generators: Mapping[str, Any]) -> None:
        restore_rng_state(generators)
        if self._reseed_rank is not None:
            reseed_for_rank(self._reseed_rank)
            self._reseed_rank = None

    def _current_generators(self, next_epoch: bool = False) -> dict[str, Any]:
        """The generators training continues from (those set aside while validation runs),
        with the DataLoader workers' streams under ``'workers'``."""
        generators = self._generators_outside_val
        if generators is None:
            generators = capture_rng_state()
        streams = self._worker_streams
        if streams is not None:
            generators = {**generators, "workers": streams.state(pass_done=next_epoch)}
        return generators

    def gather_rng_states(self) -> list[dict[str, Any]]:
        """Every rank's generators (a collective): a checkpoint writer that stores them as
        ``state['rng_per_rank']`` makes a multi-process resume exact on every rank."""
        # Every rank checks the held losses here, together, before rank 0 alone builds the
        # checkpoint (its state_dict() then finds none held: no collective on one rank).
        self._loss_watch.check()
        return gather_rng_states(self._current_generators(self._phase == AFTER_EPOCH))

    def _take_pending(self) -> dict[str, Any] | None:
        pending, self._pending = self._pending, None
        return pending
