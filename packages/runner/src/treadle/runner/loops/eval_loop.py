"""``ValLoop`` and ``TestLoop``: one pass over a dataloader, predictions to an evaluator."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from treadle.runner.device import autocast
from treadle.runner.evaluator import Evaluator
from treadle.runner.registry import LOOPS

from .base_loop import BaseLoop
from .eval_losses import EvalLosses


class _EvalLoop(BaseLoop):
    """The pass both share; ``_stage`` names the hooks, the step and the loss key."""

    _stage = "val"

    def __init__(self, runner: Any, dataloader: Any, evaluator: Any, fp16: bool = False) -> None:
        super().__init__(runner, dataloader)
        if isinstance(evaluator, (Mapping, list, tuple)):
            self.evaluator = runner.build_evaluator(evaluator)
        elif isinstance(evaluator, Evaluator):
            self.evaluator = evaluator
        else:
            raise TypeError(
                f"{self._stage}_evaluator must be an Evaluator, a metric config (dict) or a "
                f"list of them, got {type(evaluator).__name__}: {evaluator!r}"
            )
        self._share_dataset_meta(
            self.evaluator, runner.visualizer, purpose="evaluator, metrics and visualizer"
        )
        if not isinstance(fp16, bool):
            raise TypeError(f"{self._stage}_cfg fp16 must be True or False, got {fp16!r}")
        self.fp16 = fp16
        self._losses = EvalLosses()
        self._step = f"{self._stage}_step"
        stage = self._stage
        # The hook names, formatted once.
        self._hooks = (f"before_{stage}", f"before_{stage}_epoch", f"after_{stage}_epoch")
        self._hooks += (f"after_{stage}",)
        self._iter_hooks = (f"before_{self._stage}_iter", f"after_{self._stage}_iter")

    def run(self) -> dict[str, Any]:
        """Predict every batch, evaluate, and return the metrics (with the mean losses when
        the model reports them)."""
        runner = self.runner
        before, before_epoch, after_epoch, after = self._hooks
        runner.call_hook(before)
        runner.call_hook(before_epoch)
        runner.model.eval()
        self._losses.clear()
        for idx, data_batch in enumerate(self.dataloader):
            self.run_iter(idx, data_batch)
        metrics = self.evaluator.evaluate(len(self.dataloader.dataset))
        if self._losses:
            metrics.update(self._losses.summary(self._stage))
        runner.call_hook(after_epoch, metrics=metrics)
        runner.call_hook(after)
        return metrics

    @torch.no_grad()
    def run_iter(self, idx: int, data_batch: Sequence[Any]) -> None:
        """Predict one batch and hand the predictions to the evaluator."""
        runner = self.runner
        before_iter, after_iter = self._iter_hooks
        runner.call_hook(before_iter, batch_idx=idx, data_batch=data_batch)
        if self.fp16:
            with autocast(enabled=True):
                outputs = getattr(runner.model, self._step)(data_batch)
        else:
            outputs = getattr(runner.model, self._step)(data_batch)
        outputs = self._losses.take(outputs)
        self.evaluator.process(data_samples=outputs, data_batch=data_batch)
        runner.call_hook(after_iter, batch_idx=idx, data_batch=data_batch, outputs=outputs)


@LOOPS.register_module()
class ValLoop(_EvalLoop):
    """Validate: predict every batch of the val dataloader and evaluate.

    Args:
        runner: the runner.
        dataloader: a DataLoader or its config.
        evaluator: an Evaluator, or the config of its metric(s).
        fp16: predict under autocast (float16 on accelerators, bfloat16 on the CPU).

    Example:
        >>> val_cfg = dict(type='ValLoop', fp16=False)
        >>> runner = Runner(..., val_cfg=val_cfg,
        ...                 val_evaluator=dict(type='Accuracy'))  # doctest: +SKIP
    """

    _stage = "val"

    @property
    def val_loss(self) -> EvalLosses:
        """The losses of the last pass (MMEngine's attribute name)."""
        return self._losses


@LOOPS.register_module()
class TestLoop(_EvalLoop):
    """Test: predict every batch of the test dataloader and evaluate.

    Args:
        runner: the runner.
        dataloader: a DataLoader or its config.
        evaluator: an Evaluator, or the config of its metric(s).
        fp16: predict under autocast (float16 on accelerators, bfloat16 on the CPU).

    Example:
        >>> runner = Runner(..., test_cfg=dict(type='TestLoop'),
        ...                 test_evaluator=...)  # doctest: +SKIP
        >>> metrics = runner.test()  # doctest: +SKIP
    """

    _stage = "test"

    @property
    def test_loss(self) -> EvalLosses:
        """The losses of the last pass (MMEngine's attribute name)."""
        return self._losses
