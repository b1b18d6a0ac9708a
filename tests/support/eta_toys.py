"""Toys for the tests of part ETA (the train ETA, the timing of validation and saves): a clock
the test controls, a toy model whose steps advance it, a hook that makes each checkpoint save
take time on that clock, and a probe that reads the ETA at one iteration.

``use_clock(monkeypatch)`` puts a :class:`FakeClock` where the timer, the train loop's step
stamps and ``Runner.save_checkpoint`` read the host clock; nothing then takes time on it but
what the toys say: a train step ``train_cost`` seconds, a predicted batch ``predict_cost``, a
checkpoint save ``save_cost``.

Example:
    >>> clock = FakeClock()
    >>> clock.advance(2.5)
    >>> clock()
    2.5
"""

from __future__ import annotations

import time
from typing import Any

from runner_toy_model import ToyModel

from treadle.runner.hooks import Hook


class FakeClock:
    """A host clock that moves only when told (``advance``)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def use_clock(monkeypatch: Any) -> FakeClock:
    """A FakeClock read as ``time.perf_counter`` by the hooks and the runner, and by the train
    loop's step stamps (imported there by name)."""
    clock = FakeClock()
    monkeypatch.setattr(time, "perf_counter", clock)
    monkeypatch.setattr("treadle.runner.loops.train_loop.perf_counter", clock)
    return clock


class ClockedToyModel(ToyModel):
    """RunnerToyModel whose training forward takes ``train_cost`` seconds and whose predicting
    forward ``predict_cost`` seconds of ``clock``."""

    def __init__(self, clock: FakeClock, train_cost: float = 1.0, predict_cost: float = 0.0):
        super().__init__()
        self.clock = clock
        self.train_cost = train_cost
        self.predict_cost = predict_cost

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        self.clock.advance(self.train_cost if mode == "loss" else self.predict_cost)
        return super().forward(inputs, data_samples, mode)


class SlowSave(Hook):
    """Each checkpoint save takes ``seconds`` of ``clock`` (inside Runner.save_checkpoint)."""

    priority = "LOWEST"

    def __init__(self, clock: FakeClock, seconds: float) -> None:
        self.clock = clock
        self.seconds = seconds

    def before_save_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        self.clock.advance(self.seconds)


class EtaProbe(Hook):
    """After training iteration ``at`` (0-based), after IterTimerHook and before the hooks that
    save: keeps the hub's ``eta``, the clock, and what the loop and hooks count still to come.
    It asks to be called at that iteration only, so the timer still reads steps in bulk."""

    priority = "LOW"

    def __init__(self, clock: FakeClock, at: int) -> None:
        self.clock = clock
        self.at = at
        self.eta: float | None = None
        self.time: float | None = None

    def next_train_iter(self, runner: Any, iteration: int, batch_idx: int) -> int | None:
        return self.at if iteration <= self.at else None

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch=None, outputs=None):
        if runner.iter == self.at:
            self.eta = runner.message_hub.get_info("eta")
            self.time = self.clock()


class Schedule(Hook):
    """At every training iteration, what the train loop and the CheckpointHook count still to
    come (``validations_left()``, ``saves_left()``); and the iteration of every validation run
    and checkpoint save that really happened."""

    priority = "LOW"

    def __init__(self) -> None:
        self.expected: list[tuple[int, int, int]] = []
        self.validations: list[int] = []
        self.saves: list[int] = []

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch=None, outputs=None):
        checkpoint = next(h for h in runner.hooks if type(h).__name__ == "CheckpointHook")
        self.expected.append(
            (runner.iter, runner.train_loop.validations_left(), checkpoint.saves_left(runner))
        )

    def before_val(self, runner: Any) -> None:
        self.validations.append(runner.iter)

    def before_save_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        self.saves.append(runner.iter)
