"""Evaluator: runs several metrics over the same predictions and merges what they return."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from treadle.runner.registry import EVALUATOR, METRICS
from treadle.runner.structures import BaseDataElement

from .errors import EvaluatorArgumentError
from .metric import BaseMetric


@EVALUATOR.register_module()
class Evaluator:
    """Feed predictions to one or several metrics and merge their results.

    Args:
        metrics: a metric, a config of one (built from METRICS), or a list of them.

    Example:
        >>> evaluator = Evaluator([dict(type='TorchMetric', metric='MeanSquaredError',
        ...                             pred_key='pred', target_key='gt')])
        >>> evaluator.process([{'pred': 1.0, 'gt': 0.0}, {'pred': 2.0, 'gt': 2.0}])
        >>> evaluator.evaluate(size=2)
        {'torchmetrics/MeanSquaredError': 0.5}
    """

    def __init__(self, metrics: BaseMetric | Mapping | Sequence[BaseMetric | Mapping]) -> None:
        self._dataset_meta: dict | None = None
        if isinstance(metrics, (BaseMetric, Mapping)):
            metrics = [metrics]
        self.metrics: list[BaseMetric] = [_as_metric(metric) for metric in metrics]

    @property
    def dataset_meta(self) -> dict | None:
        """The dataset's meta information; setting it sets it on every metric."""
        return self._dataset_meta

    @dataset_meta.setter
    def dataset_meta(self, dataset_meta: dict | None) -> None:
        self._dataset_meta = dataset_meta
        for metric in self.metrics:
            metric.dataset_meta = dataset_meta

    def process(self, data_samples: Sequence[Any], data_batch: Any = None) -> None:
        """Give one batch of predictions (and optionally its inputs) to every metric; data
        elements are turned into dicts first, so metrics read every sample the same way."""
        samples = [
            sample.to_dict() if isinstance(sample, BaseDataElement) else sample
            for sample in data_samples
        ]
        for metric in self.metrics:
            metric.process(data_batch, samples)

    def evaluate(self, size: int) -> dict[str, Any]:
        """Evaluate every metric over ``size`` samples (the dataset's length) and return all
        their results in one dict; two metrics returning the same key is an error."""
        merged: dict[str, Any] = {}
        owners: dict[str, str] = {}
        for metric in self.metrics:
            for name, value in metric.evaluate(size).items():
                if name in merged:
                    raise ValueError(
                        f"There are multiple evaluation results with the same metric name "
                        f"{name!r}, from {owners[name]} and {type(metric).__name__}; give them "
                        f"different prefixes (e.g. dict(type=..., prefix='val_a'))"
                    )
                merged[name] = value
                owners[name] = type(metric).__name__
        return merged

    def offline_evaluate(
        self, data_samples: Sequence[Any], data: Sequence[Any] | None = None, chunk_size: int = 1
    ) -> dict[str, Any]:
        """Evaluate predictions saved earlier: ``data_samples`` (and their inputs ``data``)
        go to the metrics ``chunk_size`` at a time, then every metric is evaluated.

        Example:
            >>> evaluator.offline_evaluate(load('work_dirs/preds.pkl'), chunk_size=128)
        """
        if data is not None and len(data) != len(data_samples):
            raise EvaluatorArgumentError(
                f"data_samples and data should have the same length: offline_evaluate needs one "
                f"data item per data sample, got {len(data_samples)} data_samples and "
                f"{len(data)} data"
            )
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
        for start, stop in _chunks(len(data_samples), chunk_size):
            batch = None if data is None else data[start:stop]
            self.process(data_samples[start:stop], batch)
        return self.evaluate(len(data_samples))


def _as_metric(metric: Any) -> BaseMetric:
    if isinstance(metric, Mapping):
        metric = METRICS.build(metric)
    # Duck typing: MMEngine accepts any object with process and evaluate.
    if not (
        callable(getattr(metric, "process", None)) and callable(getattr(metric, "evaluate", None))
    ):
        raise TypeError(
            f"Evaluator takes metrics (such as BaseMetric instances) or configs of them, got "
            f"{type(metric).__name__}: {metric!r}"
        )
    return metric


def _chunks(length: int, chunk_size: int) -> Iterator[tuple[int, int]]:
    for start in range(0, length, chunk_size):
        yield start, min(start + chunk_size, length)
