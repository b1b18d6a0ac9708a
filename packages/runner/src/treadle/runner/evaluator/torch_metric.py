"""TorchMetric: any torchmetrics metric as a treadle metric.

Each sample's prediction and target are kept on the CPU in ``self.results``, so gathering,
dataset order and padding removal go through BaseMetric like for every metric; torchmetrics
then computes once, on rank 0, over exactly the dataset (its own distributed sync is turned
off: it would also count the padding, and would wait for ranks that do not compute).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from treadle.runner.registry import METRICS

from .metric import BaseMetric
from .torchmetrics_lookup import metric_class

_MISSING = object()


@METRICS.register_module()
class TorchMetric(BaseMetric):
    """Wrap a torchmetrics metric; the keys a config adds go to its constructor.

    Args:
        metric: a torchmetrics class name (``'MulticlassAccuracy'``), a dotted path, or a class.
        pred_key: where the prediction is in each data sample; a dotted path reaches into
            nested dicts or attributes (``'pred_instances.scores'``).
        target_key: where the target is, in the same way.
        collect_device, prefix, collect_dir: as for BaseMetric; the default prefix is
            ``'torchmetrics'``.
        **metric_kwargs: arguments of the torchmetrics class (``num_classes=10``).

    The result is named after the class (``'torchmetrics/MulticlassAccuracy'``), or after the
    keys of the dict the metric computes. Tensors become numbers, or lists when not scalar.

    Example:
        >>> metric = METRICS.build(dict(type='TorchMetric', metric='MulticlassAccuracy',
        ...                             num_classes=3, average='micro'))
        >>> metric.process(None, [{'pred_label': 2, 'gt_label': 2},
        ...                       {'pred_label': 0, 'gt_label': 1}])
        >>> metric.evaluate(size=2)
        {'torchmetrics/MulticlassAccuracy': 0.5}
    """

    default_prefix = "torchmetrics"

    def __init__(
        self,
        metric: str | type,
        pred_key: str = "pred_label",
        target_key: str = "gt_label",
        collect_device: str = "cpu",
        prefix: str | None = None,
        collect_dir: str | None = None,
        **metric_kwargs: Any,
    ) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix, collect_dir=collect_dir)
        cls = metric_class(metric)
        # Rank 0 computes alone over what BaseMetric gathered: a sync would wait for the others.
        metric_kwargs["sync_on_compute"] = False
        try:
            self.torchmetric = cls(**metric_kwargs)
        except Exception as error:
            raise type(error)(
                f"TorchMetric could not build torchmetrics {cls.__name__} with "
                f"{metric_kwargs}: {error}"
            ) from error
        self.name = cls.__name__
        self.pred_key = pred_key
        self.target_key = target_key

    def process(self, data_batch: Any, data_samples: Sequence[Any]) -> None:
        preds = _to_cpu_rows(
            [self._field(sample, self.pred_key, "pred_key") for sample in data_samples]
        )
        targets = _to_cpu_rows(
            [self._field(sample, self.target_key, "target_key") for sample in data_samples]
        )
        self.results.extend(zip(preds, targets, strict=True))

    def compute_metrics(self, results: list) -> dict[str, Any]:
        self.torchmetric.reset()
        for preds, targets in _stacked_runs(results):
            self.torchmetric.update(preds, targets)
        value = self.torchmetric.compute()
        self.torchmetric.reset()
        if isinstance(value, Mapping):
            return {str(name): _to_python(item) for name, item in value.items()}
        return {self.name: _to_python(value)}

    def _field(self, sample: Any, path: str, argument: str) -> Any:
        value = sample
        for part in path.split("."):
            if isinstance(value, Mapping):
                value = value.get(part, _MISSING)
            else:
                value = getattr(value, part, _MISSING)
            if value is _MISSING:
                raise KeyError(
                    f"TorchMetric({self.name}): {argument}={path!r} is not in the data sample "
                    f"(no {part!r}; it has {_keys(sample)})"
                )
        return value


def _keys(sample: Any) -> str:
    if isinstance(sample, Mapping):
        return f"keys {sorted(map(str, sample))}"
    if callable(getattr(sample, "keys", None)):
        return f"keys {sorted(map(str, sample.keys()))}"
    return f"type {type(sample).__name__}"


def _to_cpu_rows(values: list[Any]) -> list[torch.Tensor]:
    """One CPU tensor per sample, owning its memory (a view would keep and pickle the whole
    batch). Device tensors of one shape cross to the CPU in one copy, not one per sample."""
    tensors = [
        value.detach() if isinstance(value, torch.Tensor) else torch.as_tensor(value)
        for value in values
    ]
    on_device = [tensor for tensor in tensors if tensor.device.type != "cpu"]
    if on_device and len(on_device) == len(tensors) and _same_shape(tensors):
        return [row.clone() for row in torch.stack(tensors).cpu().unbind(0)]
    return [_owning(tensor.cpu()) for tensor in tensors]


def _same_shape(tensors: list[torch.Tensor]) -> bool:
    first = tensors[0]
    return all(
        t.shape == first.shape and t.dtype == first.dtype and t.device == first.device
        for t in tensors
    )


def _owning(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.untyped_storage().nbytes() > tensor.numel() * tensor.element_size():
        return tensor.clone()
    return tensor


def _stacked_runs(results: list) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Stack consecutive samples whose prediction and target shapes agree: one update per run
    (usually the whole dataset) instead of one per sample."""
    runs: list[tuple[torch.Tensor, torch.Tensor]] = []
    start = 0
    for index in range(1, len(results) + 1):
        if index < len(results) and _shapes(results[index]) == _shapes(results[start]):
            continue
        chunk = results[start:index]
        runs.append((torch.stack([p for p, _ in chunk]), torch.stack([t for _, t in chunk])))
        start = index
    return runs


def _shapes(result: tuple[torch.Tensor, torch.Tensor]) -> tuple[torch.Size, torch.Size]:
    return result[0].shape, result[1].shape


def _to_python(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.item() if value.numel() == 1 and value.dim() == 0 else value.tolist()
    if isinstance(value, Mapping):
        return {name: _to_python(item) for name, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_python(item) for item in value]
    return value
