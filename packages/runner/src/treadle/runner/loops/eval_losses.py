"""Losses a model reports while validating or testing, averaged over the whole pass.

A model's ``val_step``/``test_step`` may end its list of outputs with a data element holding
only ``loss`` (a dict of tensors or lists of tensors). MMEngine turns each into a number at
every step; here they stay tensors until the pass ends, then become numbers in one go.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from treadle.runner.structures import BaseDataElement


class EvalLosses:
    """Collects the losses of each step; :meth:`summary` averages them.

    Example:
        >>> losses = EvalLosses()
        >>> outputs = losses.take([1, BaseDataElement(loss=dict(loss_a=torch.tensor(2.0)))])
        >>> outputs
        [1]
        >>> losses.summary('val')
        {'loss_a': 2.0, 'val_loss': 2.0}
    """

    def __init__(self) -> None:
        self._values: dict[str, list[Any]] = {}

    def clear(self) -> None:
        self._values.clear()

    def __bool__(self) -> bool:
        return bool(self._values)

    def take(self, outputs: Any) -> Any:
        """``outputs`` without a trailing loss element, whose losses are kept."""
        if not isinstance(outputs, list) or not outputs:
            return outputs
        last = outputs[-1]
        if not (isinstance(last, BaseDataElement) and list(last.keys()) == ["loss"]):
            return outputs
        for name, value in last.loss.items():
            values = self._values.setdefault(name, [])
            if isinstance(value, torch.Tensor):
                values.append(value.detach())
            elif isinstance(value, (list, tuple)) and all(
                isinstance(v, torch.Tensor) for v in value
            ):
                values.extend(v.detach() for v in value)
        return outputs[:-1]

    def summary(self, stage: str) -> dict[str, float]:
        """The mean of each loss over the pass, and their sum (of names holding 'loss') as
        ``'{stage}_loss'``."""
        result: dict[str, float] = {}
        total = 0.0
        for name, values in self._values.items():
            if not values:
                continue
            numbers = torch.stack([v.float().reshape(-1)[0] for v in values]).tolist()
            mean = float(np.sum(np.asarray(numbers, dtype=np.float64)) / len(numbers))
            result[name] = mean
            if "loss" in name:
                total += mean
        result[f"{stage}_loss"] = total
        return result
