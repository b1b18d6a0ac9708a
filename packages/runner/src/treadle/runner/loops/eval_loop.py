"""``ValLoop`` and ``TestLoop``: one pass over a dataloader, predictions to an evaluator."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import nullcontext
from typing import Any

import torch

from treadle.runner.device import autocast
from treadle.runner.evaluator import Evaluator
from treadle.runner.registry import LOOPS
from treadle.runner.strategies.async_sources import wait_for_host_copy

from .base_loop import BaseLoop
from .eval_loss_forward import EvalForward
from .eval_loss_mean import EvalLossMean
from .eval_losses import EvalLosses


class _EvalLoop(BaseLoop):
    """The pass both share; ``_stage`` names the hooks, the step and the loss key."""

    _stage = "val"

    def __init__(
        self,
        runner: Any,
        dataloader: Any,
        evaluator: Any,
        fp16: bool = False,
        compute_loss: bool = False,
    ) -> None:
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
        if not isinstance(compute_loss, bool):
            raise TypeError(
                f"{self._stage}_cfg compute_loss must be True or False, got {compute_loss!r}"
            )
        self.compute_loss = compute_loss
        self._losses = EvalLosses()
        self._loss_mean = EvalLossMean(self._stage)
        self._loss_forward: EvalForward | None = None
        # The metric names compute_loss reported in the last pass (see loss_metric_names).
        self._loss_names: frozenset[str] = frozenset()
        self._step = f"{self._stage}_step"
        stage = self._stage
        # The hook names, formatted once.
        self._hooks = (f"before_{stage}", f"before_{stage}_epoch", f"after_{stage}_epoch")
        self._hooks += (f"after_{stage}",)
        self._iter_hooks = (f"before_{self._stage}_iter", f"after_{self._stage}_iter")

    def run(self) -> dict[str, Any]:
        """Predict every batch, evaluate, and return the metrics (with the mean losses when
        the model reports them, and ``<stage>/loss``, ``<stage>/<term>`` with
        ``compute_loss``)."""
        runner = self.runner
        before, before_epoch, after_epoch, after = self._hooks
        # Validation may change the weights in place (EMAHook): an asynchronous checkpoint
        # still copying them finishes that copy first.
        wait_for_host_copy(runner)
        runner.call_hook(before)
        runner.call_hook(before_epoch)
        runner.model.eval()
        self._losses.clear()
        self._loss_mean.clear()
        # Built per pass: the model may have been wrapped since the loop was built.
        self._loss_forward = EvalForward(runner.model, self._stage) if self.compute_loss else None
        for idx, data_batch in enumerate(self.dataloader):
            self.run_iter(idx, data_batch)
        metrics = self.evaluator.evaluate(len(self.dataloader.dataset))
        if self._losses:
            metrics.update(self._losses.summary(self._stage))
        if self.compute_loss:
            self._add_mean_losses(metrics)
        runner.call_hook(after_epoch, metrics=metrics)
        runner.call_hook(after)
        return metrics

    @torch.no_grad()
    def run_iter(self, idx: int, data_batch: Sequence[Any]) -> None:
        """Predict one batch and hand the predictions to the evaluator."""
        runner = self.runner
        before_iter, after_iter = self._iter_hooks
        runner.call_hook(before_iter, batch_idx=idx, data_batch=data_batch)
        with autocast(enabled=True) if self.fp16 else nullcontext():
            if self._loss_forward is not None:
                outputs, losses, count = self._loss_forward(data_batch)
                self._loss_mean.add(losses, count)
            else:
                outputs = getattr(runner.model, self._step)(data_batch)
        outputs = self._losses.take(outputs)
        self.evaluator.process(data_samples=outputs, data_batch=data_batch)
        runner.call_hook(after_iter, batch_idx=idx, data_batch=data_batch, outputs=outputs)

    def _add_mean_losses(self, metrics: dict[str, Any]) -> None:
        """Put the mean of each loss term over the whole set (every rank) into ``metrics``."""
        means = self._loss_mean.summary()
        clashes = sorted(set(means) & set(metrics))
        if clashes:
            raise ValueError(
                f"{self._stage}_cfg compute_loss=True reports {clashes}, but the "
                f"{self._stage}_evaluator already returns metrics of those names: give the "
                f"metric another prefix"
            )
        metrics.update(means)
        self._loss_names = frozenset(means)

    @property
    def loss_metric_names(self) -> frozenset[str]:
        """The metric names ``compute_loss`` reports (``'val/loss'``, ``'val/<term>'``): those
        of the last pass and of this pass's batches so far.

        Between passes the message hub's history of these names holds earlier passes' values
        only, so the LogProcessor leaves them out of the iteration lines of a pass (MMEngine's
        rule would show their stale mean there); the epoch line shows the pass's own value.
        """
        return self._loss_names.union(self._loss_mean.keys())


@LOOPS.register_module()
class ValLoop(_EvalLoop):
    """Validate: predict every batch of the val dataloader and evaluate.

    Args:
        runner: the runner.
        dataloader: a DataLoader or its config.
        evaluator: an Evaluator, or the config of its metric(s).
        fp16: predict under autocast (float16 on accelerators, bfloat16 on the CPU).
        compute_loss: also run the model in loss mode on every batch (same preprocessed
            data, no gradients) and report the mean of each loss term over the whole set,
            across ranks, as ``val/loss`` and ``val/<term>`` beside the metrics.

    Example:
        >>> val_cfg = dict(type='ValLoop', fp16=False, compute_loss=True)
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
        compute_loss: also report the mean losses over the test set, as ``test/loss`` and
            ``test/<term>`` (see ValLoop).

    Example:
        >>> runner = Runner(..., test_cfg=dict(type='TestLoop', compute_loss=True),
        ...                 test_evaluator=...)  # doctest: +SKIP
        >>> metrics = runner.test()  # doctest: +SKIP
    """

    _stage = "test"

    @property
    def test_loss(self) -> EvalLosses:
        """The losses of the last pass (MMEngine's attribute name)."""
        return self._losses
