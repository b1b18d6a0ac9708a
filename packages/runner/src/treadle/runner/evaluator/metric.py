"""BaseMetric: the base class of every metric, and how its results travel across ranks.

A metric sees the batches of its own rank in ``process`` and keeps one entry per sample in
``self.results``. ``evaluate`` gathers the entries of all ranks on rank 0 in dataset order
(treadle.dist drops the padding a distributed sampler added), computes the metrics there once,
and sends the same dict to every rank, so that every rank takes the same decisions (best
checkpoint, early stopping) afterwards.
"""

from __future__ import annotations

import copy
import logging
from abc import ABCMeta, abstractmethod
from collections.abc import Sequence
from typing import Any

from treadle.dist import (
    all_gather_object,
    broadcast_object_list,
    collect_results,
    get_world_size,
    is_main_process,
)
from treadle.logging import print_log

COLLECT_DEVICES = ("cpu", "gpu")


class BaseMetric(metaclass=ABCMeta):
    """Base class of metrics: ``process`` adds per-sample entries to ``self.results``,
    ``compute_metrics`` turns all of them (every rank's, in dataset order) into a dict.

    Args:
        collect_device: how results of several processes are gathered: ``'cpu'`` (host memory,
            or files in ``collect_dir``) or ``'gpu'`` (through the communication device).
        prefix: put before every key the metric returns (``'prefix/key'``);
            ``default_prefix`` when None.
        collect_dir: a directory every rank can reach, to gather results through files
            (``collect_device='cpu'`` only); None gathers them in memory.

    Example:
        >>> class Accuracy(BaseMetric):
        ...     default_prefix = 'acc'
        ...     def process(self, data_batch, data_samples):
        ...         self.results.extend(s['pred'] == s['gt'] for s in data_samples)
        ...     def compute_metrics(self, results):
        ...         return {'top1': sum(results) / len(results)}
        >>> metric = Accuracy()
        >>> metric.process(None, [{'pred': 1, 'gt': 1}, {'pred': 0, 'gt': 1}])
        >>> metric.evaluate(size=2)
        {'acc/top1': 0.5}
    """

    default_prefix: str | None = None

    def __init__(
        self, collect_device: str = "cpu", prefix: str | None = None, collect_dir: str | None = None
    ) -> None:
        if collect_device not in COLLECT_DEVICES:
            raise ValueError(
                f"{type(self).__name__}: collect_device must be one of "
                f"{', '.join(map(repr, COLLECT_DEVICES))}, got {collect_device!r}"
            )
        if collect_dir is not None and collect_device != "cpu":
            raise ValueError(
                f"{type(self).__name__}: collect_dir={collect_dir!r} needs collect_device='cpu' "
                f"(results go through files there), got collect_device={collect_device!r}"
            )
        self._dataset_meta: dict | None = None
        self.collect_device = collect_device
        self.collect_dir = collect_dir
        self.results: list[Any] = []
        # An empty prefix means "not given", as in MMEngine.
        self.prefix = prefix or self.default_prefix
        if self.prefix is None:
            print_log(
                f"The prefix is not set in metric class {type(self).__name__}: its keys are "
                "returned as they are.",
                logger="current",
                level=logging.WARNING,
            )

    @property
    def dataset_meta(self) -> dict | None:
        """The meta information of the dataset (class names, palette...), None when unset."""
        return self._dataset_meta

    @dataset_meta.setter
    def dataset_meta(self, dataset_meta: dict | None) -> None:
        # A copy: a metric that edits its meta must not change the dataset's.
        self._dataset_meta = copy.deepcopy(dataset_meta)

    @abstractmethod
    def process(self, data_batch: Any, data_samples: Sequence[Any]) -> None:
        """Add what ``compute_metrics`` needs about one batch to ``self.results``."""

    @abstractmethod
    def compute_metrics(self, results: list) -> dict[str, Any]:
        """Compute the metrics from the results of the whole dataset (rank 0 only)."""

    def evaluate(self, size: int) -> dict[str, Any]:
        """Gather the results of every rank, compute the metrics on rank 0 and return them
        (prefixed) on every rank; ``self.results`` is emptied.

        Args:
            size: the length of the dataset; results past it (the padding a distributed
                sampler adds) are dropped.
        """
        if not self.results:
            print_log(
                f"{type(self).__name__} got no results to evaluate: its process method must "
                "append to self.results.",
                logger="current",
                level=logging.WARNING,
            )
        collected = self._collect(size)
        outcome: list[Any] = [None]
        error: Exception | None = None
        if is_main_process():
            try:
                outcome[0] = self._prefixed(self.compute_metrics(collected))
            except Exception as exception:
                error = exception
                # The other ranks wait in the broadcast: they learn of the failure and raise too.
                outcome[0] = _Failure(f"{type(exception).__name__}: {exception}")
        broadcast_object_list(outcome)
        self.results.clear()
        if error is not None:
            raise error
        if isinstance(outcome[0], _Failure):
            raise RuntimeError(
                f"{type(self).__name__}.compute_metrics failed on rank 0: {outcome[0].message}"
            )
        return outcome[0]

    def _collect(self, size: int) -> list | None:
        if get_world_size() == 1:
            # MMEngine's rule: at most ``size`` results; fewer (one per batch) are kept as is.
            return self.results[:size]
        # A metric that keeps one result per batch holds fewer results than samples; MMEngine
        # then returns all of them, where treadle.dist refuses. One small gather of the counts
        # per evaluation keeps MMEngine's behaviour.
        total = sum(all_gather_object(len(self.results)))
        return collect_results(
            self.results, min(size, total), self.collect_device, tmpdir=self.collect_dir
        )

    def _prefixed(self, metrics: Any) -> dict[str, Any]:
        if not isinstance(metrics, dict):
            raise TypeError(
                f"{type(self).__name__}.compute_metrics must return a dict of metric names to "
                f"values, got {type(metrics).__name__}: {metrics!r}"
            )
        if not self.prefix:
            return metrics
        return {f"{self.prefix}/{name}": value for name, value in metrics.items()}


class _Failure:
    """What rank 0 broadcasts when compute_metrics raised (exceptions may not pickle)."""

    def __init__(self, message: str) -> None:
        self.message = message
