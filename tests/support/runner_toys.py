"""Toys shared by the tests of treadle-runner's model, optim and scheduler parts: a handler that
keeps what the current MMLogger logs, a switch that keeps runs on the CPU, a stand-in for
DistributedDataParallel's ``no_sync``, and a tiny SGD with the loop that steps it together with
its schedulers.

Import them as ``from runner_toys import ...`` (tests/support is on pytest's ``pythonpath``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch import nn

from treadle.logging import MMLogger


class LogCapture(logging.Handler):
    """Keeps every record it is given: ``records``, and their texts in ``messages``."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self.messages.append(record.getMessage())

    def at(self, level: int) -> list[str]:
        """The texts of the records logged at exactly ``level``."""
        return [record.getMessage() for record in self.records if record.levelno == level]


@contextlib.contextmanager
def captured_log(logger: logging.Logger | None = None) -> Iterator[LogCapture]:
    """What ``logger`` (the current MMLogger by default) logs inside the ``with`` block (a
    test's ``log`` fixture)."""
    if logger is None:
        logger = MMLogger.get_current_instance()
    capture = LogCapture()
    logger.addHandler(capture)
    try:
        yield capture
    finally:
        logger.removeHandler(capture)


@contextlib.contextmanager
def on_the_cpu() -> Iterator[None]:
    """Runs built inside the ``with`` block choose the CPU even on a GPU machine: the one-process
    references that tests compare with a gloo group's ranks, which see no GPU
    (tests/support/gloo_group.py)."""
    from treadle.runner.device import availability

    saved = availability._CHECKS["cuda"]
    availability._CHECKS["cuda"] = lambda: False
    try:
        yield
    finally:
        availability._CHECKS["cuda"] = saved


class FakeDDP(nn.Module):
    """Wraps ``module`` and records, for each forward pass, whether it ran outside ``no_sync``
    (DistributedDataParallel decides at forward time whether the backward will all-reduce)."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module
        self.synced: list[bool] = []
        self._sync = True

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        self._sync = False
        try:
            yield
        finally:
            self._sync = True

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        self.synced.append(self._sync)
        return self.module(inputs)


def make_sgd(lr: float = 1.0, groups: int = 1, **defaults: Any) -> torch.optim.SGD:
    """An SGD over ``groups`` param groups of one zero parameter each, for schedulers to drive."""
    params = [{"params": [nn.Parameter(torch.zeros(1))]} for _ in range(groups)]
    return torch.optim.SGD(params, lr=lr, **defaults)


def step_values(optimizer: Any, schedulers: Any, steps: int, key: str = "lr") -> list[float]:
    """``key`` of the first param group before each of ``steps`` steps: ``optimizer.step()``,
    then each scheduler's ``step()`` in order (``schedulers``: one, or a list to chain)."""
    chain: Sequence[Any] = schedulers if isinstance(schedulers, (list, tuple)) else [schedulers]
    values = []
    for _ in range(steps):
        values.append(optimizer.param_groups[0][key])
        optimizer.step()
        for scheduler in chain:
            scheduler.step()
    return values
