"""``Hook``: the base class of everything the loops call at their fixed points."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from ..utils.objects import is_method_overridden

DATA_BATCH = dict | tuple | list | None

# The shared methods a hook may override instead of the train/val/test ones, and the points
# each of them serves.
_SHARED_METHODS = {
    "_before_epoch": ("before_train_epoch", "before_val_epoch", "before_test_epoch"),
    "_after_epoch": ("after_train_epoch", "after_val_epoch", "after_test_epoch"),
    "_before_iter": ("before_train_iter", "before_val_iter", "before_test_iter"),
    "_after_iter": ("after_train_iter", "after_val_iter", "after_test_iter"),
}


class Hook:
    """A set of callbacks the runner calls at fixed points of training, validation and testing.

    Subclass it and override the points you need (``stages`` lists them all). The
    ``train``/``val``/``test`` versions of the epoch and iteration points all forward to
    ``_before_epoch``, ``_after_epoch``, ``_before_iter`` and ``_after_iter`` with a ``mode``
    argument, so a hook that acts the same way in every loop overrides only those. ``priority``
    (a ``Priority`` name or a number from 0 to 100) orders the hooks: lower runs first.

    Example:
        >>> class CountIters(Hook):
        ...     priority = 'LOW'
        ...     def __init__(self):
        ...         self.count = 0
        ...     def _after_iter(self, runner, batch_idx, data_batch=None, outputs=None,
        ...                     mode='train'):
        ...         self.count += 1
        >>> hook = CountIters()
        >>> hook.after_train_iter(None, 0)
        >>> hook.after_val_iter(None, 0)
        >>> hook.count
        2
        >>> sorted(hook.get_triggered_stages())
        ['after_test_iter', 'after_train_iter', 'after_val_iter']
    """

    priority: ClassVar[Any] = "NORMAL"
    stages: ClassVar[tuple[str, ...]] = (
        "before_run",
        "after_load_checkpoint",
        "before_train",
        "before_train_epoch",
        "before_train_iter",
        "after_train_iter",
        "after_train_epoch",
        "before_val",
        "before_val_epoch",
        "before_val_iter",
        "after_val_iter",
        "after_val_epoch",
        "after_val",
        "before_save_checkpoint",
        "after_train",
        "before_test",
        "before_test_epoch",
        "before_test_iter",
        "after_test_iter",
        "after_test_epoch",
        "after_test",
        "after_run",
    )

    # Whole-run points.
    def before_run(self, runner: Any) -> None:
        """Before training, validation or testing starts (``runner.train()`` and friends)."""

    def after_run(self, runner: Any) -> None:
        """After the run has finished."""

    def before_train(self, runner: Any) -> None:
        """Before the first training epoch (after a resume has been loaded)."""

    def after_train(self, runner: Any) -> None:
        """After the last training epoch."""

    def before_val(self, runner: Any) -> None:
        """Before a validation pass."""

    def after_val(self, runner: Any) -> None:
        """After a validation pass."""

    def before_test(self, runner: Any) -> None:
        """Before testing."""

    def after_test(self, runner: Any) -> None:
        """After testing."""

    def before_save_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        """Just before ``checkpoint`` (the dict about to be saved) is written; may add to it."""

    def after_load_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        """Just after ``checkpoint`` (the loaded dict) has been restored into the runner."""

    # Epoch points.
    def before_train_epoch(self, runner: Any) -> None:
        """Before each training epoch."""
        self._before_epoch(runner, mode="train")

    def before_val_epoch(self, runner: Any) -> None:
        """Before each validation epoch."""
        self._before_epoch(runner, mode="val")

    def before_test_epoch(self, runner: Any) -> None:
        """Before each test epoch."""
        self._before_epoch(runner, mode="test")

    def after_train_epoch(self, runner: Any) -> None:
        """After each training epoch."""
        self._after_epoch(runner, mode="train")

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        """After each validation epoch, with the evaluator's ``metrics``."""
        self._after_epoch(runner, mode="val")

    def after_test_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        """After each test epoch, with the evaluator's ``metrics``."""
        self._after_epoch(runner, mode="test")

    # Iteration points.
    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: DATA_BATCH = None) -> None:
        """Before each training iteration, with the batch about to be trained on."""
        self._before_iter(runner, batch_idx=batch_idx, data_batch=data_batch, mode="train")

    def before_val_iter(self, runner: Any, batch_idx: int, data_batch: DATA_BATCH = None) -> None:
        """Before each validation iteration."""
        self._before_iter(runner, batch_idx=batch_idx, data_batch=data_batch, mode="val")

    def before_test_iter(self, runner: Any, batch_idx: int, data_batch: DATA_BATCH = None) -> None:
        """Before each test iteration."""
        self._before_iter(runner, batch_idx=batch_idx, data_batch=data_batch, mode="test")

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | None = None,
    ) -> None:
        """After each training iteration, with the dict ``train_step`` returned."""
        self._after_iter(
            runner, batch_idx=batch_idx, data_batch=data_batch, outputs=outputs, mode="train"
        )

    def after_val_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: Sequence | None = None,
    ) -> None:
        """After each validation iteration, with the predictions ``val_step`` returned."""
        self._after_iter(
            runner, batch_idx=batch_idx, data_batch=data_batch, outputs=outputs, mode="val"
        )

    def after_test_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: Sequence | None = None,
    ) -> None:
        """After each test iteration, with the predictions ``test_step`` returned."""
        self._after_iter(
            runner, batch_idx=batch_idx, data_batch=data_batch, outputs=outputs, mode="test"
        )

    # The shared points the train/val/test ones forward to.
    def _before_epoch(self, runner: Any, mode: str = "train") -> None:
        """Before an epoch of any loop; ``mode`` is 'train', 'val' or 'test'."""

    def _after_epoch(self, runner: Any, mode: str = "train") -> None:
        """After an epoch of any loop."""

    def _before_iter(
        self, runner: Any, batch_idx: int, data_batch: DATA_BATCH = None, mode: str = "train"
    ) -> None:
        """Before an iteration of any loop."""

    def _after_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | Sequence | None = None,
        mode: str = "train",
    ) -> None:
        """After an iteration of any loop."""

    # Which training iterations need the hook. The train loops call the before/after_train_iter
    # hooks only at iterations where one of them has work, so that a step costs nothing more
    # than the model's own work when no hook is due.

    #: True for a hook whose before/after_train_iter only keep records (RuntimeInfoHook,
    #: IterTimerHook): the loop skips it while no other hook is due, and when it calls it, the
    #: steps since its last call are in ``runner.train_loop.steps_since_hooks`` (see
    #: :func:`~treadle.runner.utils.train_steps.step_records`). Such a hook may have a
    #: ``record_skipped_steps(runner, iteration)`` method, which the loop calls before the
    #: hooks of ``iteration`` so that it writes what it skipped before any hook reads it.
    defer_train_iter: ClassVar[bool] = False

    def next_train_iter(self, runner: Any, iteration: int, batch_idx: int) -> int | None:
        """The first training iteration, ``iteration`` or later, at which this hook's
        ``before_train_iter``/``after_train_iter`` must be called; ``batch_idx`` is the
        ``batch_idx`` the loop gives that iteration. None: none before the current epoch ends
        (the loop asks again when the next one starts).

        The default, ``iteration``, calls the hook at every iteration, which is always right. A
        hook that acts at intervals returns the next one, so that the loop skips it until then;
        it is asked again after each call, and may still be called at other iterations.
        """
        return iteration

    # Marks this default answer, "now", for the loops: a hook that keeps it is due at every
    # iteration, and they need not ask it (see loops/iter_hooks.py).
    next_train_iter.every_iteration = True  # type: ignore[attr-defined]

    # Helpers for deciding when to act.
    def every_n_epochs(self, runner: Any, n: int, start: int = 0) -> bool:
        """Whether the epoch that is ending is the n-th, 2n-th... counted from epoch ``start``."""
        dividend = runner.epoch + 1 - start
        return n > 0 and dividend >= 0 and dividend % n == 0

    def every_n_inner_iters(self, batch_idx: int, n: int) -> bool:
        """Whether ``batch_idx`` is the n-th, 2n-th... batch of its epoch."""
        return n > 0 and (batch_idx + 1) % n == 0

    def every_n_train_iters(self, runner: Any, n: int, start: int = 0) -> bool:
        """Whether the training iteration that is ending is the n-th, 2n-th... from ``start``."""
        dividend = runner.iter + 1 - start
        return n > 0 and dividend >= 0 and dividend % n == 0

    def end_of_epoch(self, dataloader: Any, batch_idx: int) -> bool:
        """Whether ``batch_idx`` is the last batch of ``dataloader``."""
        return batch_idx + 1 == len(dataloader)

    def is_last_train_epoch(self, runner: Any) -> bool:
        """Whether the epoch that is ending is the last one of training."""
        return runner.epoch + 1 == runner.max_epochs

    def is_last_train_iter(self, runner: Any) -> bool:
        """Whether the iteration that is ending is the last one of training."""
        return runner.iter + 1 == runner.max_iters

    def get_triggered_stages(self) -> list[str]:
        """The points of ``stages`` this hook does something at (it overrides them, or the
        shared method they forward to). The runner may skip a hook at any other point."""
        triggered = {stage for stage in self.stages if is_method_overridden(stage, Hook, self)}
        for method, stages in _SHARED_METHODS.items():
            if is_method_overridden(method, Hook, self):
                triggered.update(stages)
        # In `stages` order, so the result does not depend on set ordering.
        return [stage for stage in self.stages if stage in triggered]


def keeps_methods(hook: Any, base: type, names: tuple[str, ...]) -> bool:
    """Whether ``hook``'s class uses ``base``'s own ``names`` (no subclass overrides them): the
    recording hooks' test for doing their per-step work inline or leaving it to the hub's
    pending writer."""
    cls = type(hook)
    return all(getattr(cls, name) is base.__dict__[name] for name in names)
