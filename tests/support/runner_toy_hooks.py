"""Hooks shared by the tests of Hook and of the Runner: MMEngine's hook points in MMEngine's
order, ``Points`` (records each point it is called at) and ``StopAfterEpoch`` (cuts a run short,
as a kill would, to test resuming).

Import them as ``from runner_toy_hooks import MMENGINE_STAGES, Points, StopAfterEpoch``.

Example:
    >>> points = Points()
    >>> Runner(**cfg, custom_hooks=[points]).train()
    >>> points.points[:2]
    ['before_run', 'before_train']
"""

from __future__ import annotations

from treadle.runner.hooks import Hook

# Written out rather than read from Hook.stages: the tests check Hook.stages against it.
MMENGINE_STAGES = (
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


class Points(Hook):
    """Records, in ``points``, every hook point it is called at."""

    def __init__(self) -> None:
        self.points: list[str] = []


def _recorder(point: str):
    def record(self, runner, **kwargs):
        self.points.append(point)

    return record


for _point in Hook.stages:
    setattr(Points, _point, _recorder(_point))


class Interrupted(RuntimeError):
    """What StopAfterEpoch raises: ``interrupted after epoch N``."""


class StopAfterEpoch(Hook):
    """Stops the run after ``epoch`` epochs, once their checkpoint is written (as a kill)."""

    priority = "LOWEST"  # after CheckpointHook has saved the epoch

    def __init__(self, epoch: int) -> None:
        self.epoch = epoch

    def after_train_epoch(self, runner) -> None:
        if runner.epoch + 1 == self.epoch:
            raise Interrupted(f"interrupted after epoch {self.epoch}")
