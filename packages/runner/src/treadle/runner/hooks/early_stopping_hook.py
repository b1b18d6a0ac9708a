"""``EarlyStoppingHook``: ends training when a validation metric stops improving."""

from __future__ import annotations

import math
import warnings
from typing import Any, ClassVar

from ..registry import HOOKS
from .errors import RunnerStateTypeError
from .hook import Hook

# Metric names whose bigger values are better, and smaller, for guessing the rule (matched
# case-insensitively, whole name first, then as a part of it).
_GREATER_KEYS = ("acc", "top", "AR@", "auc", "precision", "mAP", "mDice", "mIoU", "mAcc", "aAcc")
_LESS_KEYS = ("loss",)
_RULES = {"greater": lambda x, y: x > y, "less": lambda x, y: x < y}


def infer_rule(monitor: str) -> str:
    """'greater' or 'less' for the metric name ``monitor``, from the names above.

    Example:
        >>> infer_rule('accuracy/top1'), infer_rule('val_loss')
        ('greater', 'less')
    """
    name = monitor.lower()
    greater = [key.lower() for key in _GREATER_KEYS]
    less = [key.lower() for key in _LESS_KEYS]
    if name in greater:
        return "greater"
    if name in less:
        return "less"
    if any(key in name for key in greater):
        return "greater"
    if any(key in name for key in less):
        return "less"
    raise ValueError(
        f"EarlyStoppingHook: cannot tell whether a bigger or a smaller {monitor!r} is better; "
        f"pass rule='greater' or rule='less'"
    )


@HOOKS.register_module()
class EarlyStoppingHook(Hook):
    """Stops training once the validation metric ``monitor`` has not improved by at least
    ``min_delta`` for ``patience`` validations in a row, when it reaches
    ``stopping_threshold``, or (with ``check_finite``) when it is NaN or infinite. Training ends
    after the current epoch's work, through ``runner.train_loop.stop_training``. A validation
    outside training (``runner.val()``) leaves it alone.

    Args:
        monitor: the metric's key in the evaluator's results (e.g. 'accuracy/top1').
        rule: 'greater' or 'less' is better; guessed from ``monitor`` when None.
        min_delta: the smallest change that counts as an improvement.
        strict: raise when ``monitor`` is missing from the results (otherwise warn and skip).
        check_finite: stop when the metric is NaN or infinite.
        patience: validations without improvement before stopping; 0 stops at the first
            validation that does not improve (as 1 does), the setting to use with
            ``stopping_threshold`` when only the threshold should stop training.
        stopping_threshold: stop as soon as the metric is better than this.

    The best score and the count of validations without improvement are saved in checkpoints
    (``state_dict``), so a resumed run stops when the uninterrupted one would have.

    Example:
        >>> hook = EarlyStoppingHook(monitor='accuracy/top1', patience=3)
        >>> hook.rule
        'greater'
    """

    priority = "LOWEST"
    rule_map: ClassVar[dict[str, Any]] = _RULES
    _default_greater_keys: ClassVar[list[str]] = list(_GREATER_KEYS)
    _default_less_keys: ClassVar[list[str]] = list(_LESS_KEYS)

    def __init__(
        self,
        monitor: str,
        rule: str | None = None,
        min_delta: float = 0.1,
        strict: bool = False,
        check_finite: bool = True,
        patience: int = 5,
        stopping_threshold: float | None = None,
    ) -> None:
        if rule is None:
            rule = infer_rule(monitor)
        elif rule not in _RULES:
            raise ValueError(f"EarlyStoppingHook: rule must be 'greater' or 'less', got {rule!r}")
        if patience < 0:
            # MMEngine takes it and stops at the first validation without improvement.
            warnings.warn(
                f"EarlyStoppingHook: patience={patience} is negative; it stops training at the "
                "first validation without improvement, as patience=0 does",
                stacklevel=2,
            )
        self.monitor = monitor
        self.rule = rule
        # Stored with the sign of the rule, so "better by min_delta" is one comparison.
        self.min_delta = min_delta if rule == "greater" else -min_delta
        self.strict = strict
        self.check_finite = check_finite
        self.patience = patience
        self.stopping_threshold = stopping_threshold
        self.wait_count = 0
        self.best_score = -math.inf if rule == "greater" else math.inf
        # runner.val()/test() call before_run without before_train: nothing to stop there.
        self._outside_training = False

    def _check_stop_condition(self, value: Any) -> tuple[bool, str]:
        """Update the state with the metric ``value``; return (stop?, why).

        ``best_score`` keeps the value as the evaluator gave it (a tensor stays a tensor, as
        in MMEngine); the comparisons use its float.
        """
        better = _RULES[self.rule]
        current_score = float(value)
        best = float(self.best_score)
        if self.check_finite and not math.isfinite(current_score):
            return True, (
                f"Early stopping: the monitored metric {self.monitor} = {current_score} is not "
                f"finite. The best value was {best:.3f}."
            )
        if self.stopping_threshold is not None and better(current_score, self.stopping_threshold):
            self.best_score = value
            return True, (
                f"Early stopping: the stopping threshold is reached: {self.monitor} = "
                f"{current_score} is {self.rule} than {self.stopping_threshold}."
            )
        if better(best + self.min_delta, current_score):
            self.wait_count += 1
            if self.wait_count >= self.patience:
                return True, (
                    f"Early stopping: the monitored metric {self.monitor} did not improve in the "
                    f"last {self.wait_count} validations; the best value was {best:.3f}."
                )
            return False, ""
        self.best_score = value
        self.wait_count = 0
        return False, ""

    def before_run(self, runner: Any) -> None:
        self._outside_training = True
        loop = getattr(runner, "train_loop", None)
        if loop is not None and not isinstance(loop, dict) and not hasattr(loop, "stop_training"):
            raise RunnerStateTypeError(
                f"EarlyStoppingHook needs a train loop with a `stop_training` attribute; "
                f"{type(loop).__name__} has none"
            )

    def before_train(self, runner: Any) -> None:
        self._outside_training = False

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        if self._outside_training:
            # A standalone validation neither stops a training nor counts toward patience.
            return
        metrics = metrics or {}
        if self.monitor not in metrics:
            available = ", ".join(map(repr, metrics)) or "none"
            message = (
                f"EarlyStoppingHook: the monitored metric {self.monitor!r} is not among the "
                f"validation results (they are: {available})"
            )
            if self.strict:
                raise RuntimeError(message + "; or set strict=False to skip such validations")
            warnings.warn(message + "; skipping early stopping for this validation", stacklevel=2)
            return
        stop, reason = self._check_stop_condition(metrics[self.monitor])
        if stop:
            runner.train_loop.stop_training = True
            runner.logger.info(reason)

    def state_dict(self) -> dict[str, Any]:
        """The best score and the validations without improvement so far."""
        return {"best_score": float(self.best_score), "wait_count": int(self.wait_count)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what ``state_dict`` returned."""
        self.best_score = float(state["best_score"])
        self.wait_count = int(state["wait_count"])
