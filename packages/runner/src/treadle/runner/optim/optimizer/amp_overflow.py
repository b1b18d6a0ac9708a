"""Count the optimizer steps an fp16 loss scaler skips, and stop a run whose scale collapses.

``torch.amp.GradScaler.step`` already reads on the host whether the gradients overflowed
(that read is its one sync per step) and calls ``optimizer.step()`` only when they did not.
So a step post-hook on the torch optimizer tells, with no device read of its own, whether the
step was taken. The scale itself stays on the device: it is read once per log line, and the
scales of skipped steps are copied on the device (no sync) for the collapse error's history.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Callable
from typing import Any

import torch

DEFAULT_MAX_CONSECUTIVE_SKIPS = 50

# How many scales of a run of skipped steps the collapse error shows: its first and its last.
_HEAD, _TAIL = 3, 5


class LossScaleCollapseError(RuntimeError):
    """Raised when an fp16 loss scaler skipped ``max_consecutive_skips`` optimizer steps in a
    row: the gradients overflow at every scale, and training goes on without updates.

    Example:
        >>> raise LossScaleCollapseError('the fp16 loss scale collapsed at iteration 57...')
        Traceback (most recent call last):
        ...
        treadle.runner.optim.optimizer.amp_overflow.LossScaleCollapseError: the fp16 loss...
    """


def check_max_consecutive_skips(value: Any) -> int | None:
    """``value`` if it is None or an int >= 1; else a ValueError/TypeError that names the key."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"AmpOptimWrapper max_consecutive_skips must be an int >= 1 or None (never stop), "
            f"got {type(value).__name__}: {value!r}"
        )
    if value < 1:
        raise ValueError(
            f"AmpOptimWrapper max_consecutive_skips must be >= 1 (or None to never stop), got "
            f"{value}"
        )
    return value


class StepCounter:
    """How many times a torch optimizer really stepped, counted by a step post-hook.

    The hook is this small object, not the optimizer wrapper, so the optimizer keeps no wrapper
    alive. A torch optimizer drops its hooks when copied or unpickled: ``follow(optimizer)``
    (called before each step) hooks the counter onto the optimizer the wrapper holds now.

    Example:
        >>> sgd = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
        >>> counter = StepCounter(sgd)
        >>> sgd.step(); counter.count
        1
    """

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self.count = 0
        self._handle: Any = None
        self._target: Callable[[], Any] = _nothing
        self.follow(optimizer)

    def follow(self, optimizer: torch.optim.Optimizer) -> None:
        """Count the steps of ``optimizer`` from now on (nothing to do if it already does)."""
        if self._target() is optimizer:
            return
        self.close()
        self._handle = optimizer.register_step_post_hook(self)
        self._target = weakref.ref(optimizer)

    def __call__(self, *_: Any) -> None:
        self.count += 1

    def close(self) -> None:
        """Remove the hook from the optimizer."""
        if self._handle is not None:
            self._handle.remove()
            self._handle = None
        self._target = _nothing

    def __getstate__(self) -> dict[str, int]:
        # A copy counts on where it is taken, once follow() hooks it onto its optimizer.
        return {"count": self.count}

    def __setstate__(self, state: dict[str, int]) -> None:
        self.count = state["count"]
        self._handle = None
        self._target = _nothing


def _nothing() -> None:
    return None


def _scale_text(scale: float) -> str:
    return f"{scale:g}"


class OverflowCounter:
    """The skipped steps of one loss scaler: in total, in a row, and since the last log line.

    ``record(skipped, scale, where)`` is called after every optimizer step with host values
    only; ``scale``, for a skipped step, is a device copy of the scale it used (taken before the
    scaler's update), read only if the run collapses.

    Args:
        max_consecutive_skips: this many skipped steps in a row raise
            :class:`LossScaleCollapseError`; None never raises.

    Example:
        >>> counter = OverflowCounter(max_consecutive_skips=3)
        >>> for skipped in (True, True, False, True):
        ...     counter.record(skipped, torch.tensor(1024.0), 'iteration 1')
        >>> counter.total, counter.consecutive
        (3, 1)
    """

    def __init__(self, max_consecutive_skips: int | None = DEFAULT_MAX_CONSECUTIVE_SKIPS) -> None:
        self.max_consecutive_skips = check_max_consecutive_skips(max_consecutive_skips)
        self.total = 0
        self.consecutive = 0
        # The skipped-step total when the last log line asked, and that line's answer (a second
        # line at the same iteration gets the same count).
        self._reported_total = 0
        self._reported_at: Any = None
        self._reported_count = 0
        self._streak_start: str | None = None
        self._head: list[torch.Tensor] = []
        self._tail: deque[torch.Tensor] = deque(maxlen=_TAIL)

    def record(self, skipped: bool, scale: torch.Tensor | None, where: str) -> None:
        """Count one optimizer step; ``where`` names it (read only when a streak starts)."""
        if not skipped:
            if self.consecutive:
                self.consecutive = 0
                self._head.clear()
                self._tail.clear()
            return
        self.total += 1
        self.consecutive += 1
        if self.consecutive == 1:
            self._streak_start = where
        if scale is not None:
            if len(self._head) < _HEAD:
                self._head.append(scale)
            else:
                self._tail.append(scale)
        limit = self.max_consecutive_skips
        if limit is not None and self.consecutive >= limit:
            raise LossScaleCollapseError(self._collapse_message(where))

    def skipped_since_last_report(self, iteration: Any) -> int:
        """Skipped steps since the previous call made at another ``iteration``."""
        if iteration != self._reported_at:
            self._reported_count = self.total - self._reported_total
            self._reported_total = self.total
            self._reported_at = iteration
        return self._reported_count

    def scale_history(self) -> str:
        """The scales of the current run of skipped steps, first and last ones."""
        head = [_scale_text(float(t)) for t in self._head]
        tail = [_scale_text(float(t)) for t in self._tail]
        hidden = self.consecutive - len(head) - len(tail)
        if not head and not tail:
            return "not recorded"
        middle = [f"... ({hidden} more) ..."] if hidden > 0 else []
        return ", ".join(head + middle + tail)

    def _collapse_message(self, where: str) -> str:
        return (
            f"the fp16 loss scale collapsed at {where}: the last {self.consecutive} optimizer "
            f"steps (from {self._streak_start} on) all had inf/NaN gradients and were skipped, "
            f"so the model has not been updated since; loss scale at those steps: "
            f"{self.scale_history()}. The gradients overflow at every scale: look for inf/NaN "
            f"in the data or the loss, lower the learning rate, or train in bfloat16 "
            f"(dtype='bfloat16'). optim_wrapper max_consecutive_skips="
            f"{self.max_consecutive_skips} sets how many skipped steps in a row stop the run "
            f"(None never stops)"
        )


def _wrappers(optim_wrapper: Any) -> list[tuple[str, Any]]:
    """``[(prefix, wrapper)]``: one wrapper with no prefix, or an OptimWrapperDict's by name."""
    if optim_wrapper is None:
        return []
    items = getattr(optim_wrapper, "items", None)
    if callable(items) and not hasattr(optim_wrapper, "loss_scaler"):
        return [(f"{name}.", wrapper) for name, wrapper in items()]
    return [("", optim_wrapper)]


def loss_scale_items(optim_wrapper: Any, iteration: Any) -> dict[str, float | int]:
    """``{'loss_scale': ..., 'skipped_steps': ...}`` for a log line at ``iteration`` (with the
    wrapper's name first for each wrapper of an OptimWrapperDict: ``'gen.loss_scale'``);
    empty without an enabled fp16 scaler. Reads the scale from the device: call it once a
    line, never per step.

    Example:
        >>> loss_scale_items(OptimWrapper(sgd), iteration=9)  # doctest: +SKIP
        {}
    """
    items: dict[str, float | int] = {}
    for prefix, wrapper in _wrappers(optim_wrapper):
        counter = getattr(wrapper, "overflow", None)
        if not isinstance(counter, OverflowCounter):
            continue
        items[f"{prefix}loss_scale"] = float(wrapper.loss_scaler.get_scale())
        items[f"{prefix}skipped_steps"] = counter.skipped_since_last_report(iteration)
    return items
