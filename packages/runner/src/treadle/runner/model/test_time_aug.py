"""BaseTTAModel: predict each augmented view of a batch with a model, then merge."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn as nn

from treadle.runner.registry import MODELS
from treadle.runner.structures import BaseDataElement

from .base_model import BaseModel


def split_views(data: Any) -> list:
    """The batches of each view from a test-time-augmented batch: ``{'inputs': [view0, view1],
    'data_samples': [view0, view1]}`` gives ``[{'inputs': view0, 'data_samples': view0}, ...]``;
    a tuple or list of per-view lists gives one list per view."""
    if isinstance(data, Mapping):
        if not data:
            raise ValueError("BaseTTAModel.test_step got an empty dict: no augmented views")
        counts = {key: _view_count(key, value) for key, value in data.items()}
        if len(set(counts.values())) != 1:
            raise ValueError(
                f"BaseTTAModel.test_step: every key must hold one entry per augmented view, got "
                f"{counts}"
            )
        views = next(iter(counts.values()))
        return [{key: value[view] for key, value in data.items()} for view in range(views)]
    if isinstance(data, (list, tuple)):
        if not data:
            raise ValueError("BaseTTAModel.test_step got an empty sequence: no augmented views")
        counts = {index: _view_count(f"data[{index}]", item) for index, item in enumerate(data)}
        if len(set(counts.values())) != 1:
            raise ValueError(
                f"BaseTTAModel.test_step: every item must hold one entry per augmented view, "
                f"got view counts {list(counts.values())}"
            )
        return [[item[view] for item in data] for view in range(counts[0])]
    raise TypeError(
        f"BaseTTAModel.test_step takes a dict, tuple or list from the data loader, got "
        f"{type(data).__name__}"
    )


def _view_count(key: Any, value: Any) -> int:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(
            f"BaseTTAModel.test_step: {key!r} must be a list with one entry per augmented "
            f"view, got {type(value).__name__}"
        )
    return len(value)


@MODELS.register_module()
class BaseTTAModel(BaseModel):
    """Test-time augmentation: run a model's ``test_step`` on every augmented view of a batch
    and merge the predictions of each sample with :meth:`merge_preds`.

    A TTA pipeline (with ``pseudo_collate``) gives ``inputs`` and ``data_samples`` as one list
    per view, ``inputs=[[img1_view1, img2_view1], [img1_view2, img2_view2]]``; each view is
    predicted as an ordinary batch, and :meth:`merge_preds` receives, for each sample, the
    tuple of its predictions over the views.

    Args:
        module: the model (an nn.Module with ``test_step``) or its config, built from MODELS.
        data_preprocessor: when ``module`` is a config, the preprocessor it is built with.

    Example:
        >>> class AverageTTA(BaseTTAModel):
        ...     def merge_preds(self, data_samples_list):
        ...         return [sum(views) / len(views) for views in data_samples_list]
        >>> class Double(nn.Module):
        ...     def test_step(self, data):
        ...         return [2 * x for x in data['inputs']]
        >>> AverageTTA(Double()).test_step({'inputs': [[1.0, 2.0], [3.0, 4.0]]})
        [4.0, 6.0]
    """

    def __init__(
        self, module: Mapping | nn.Module, data_preprocessor: Mapping | nn.Module | None = None
    ) -> None:
        super().__init__()
        if isinstance(module, Mapping):
            module = dict(module)  # the caller's config stays as written
            if data_preprocessor is not None:
                module["data_preprocessor"] = data_preprocessor
            module = MODELS.build(module)
        if not isinstance(module, nn.Module):
            raise TypeError(
                f"BaseTTAModel: module must be an nn.Module or a config dict, got "
                f"{type(module).__name__}: {module!r}"
            )
        if not callable(getattr(module, "test_step", None)):
            raise TypeError(
                f"BaseTTAModel: the wrapped {type(module).__name__} has no test_step method "
                "(a BaseModel has one)"
            )
        self.module = module

    @abstractmethod
    def merge_preds(self, data_samples_list: list[tuple[BaseDataElement, ...]]) -> list:
        """One prediction per sample from ``data_samples_list[i]``, the predictions of sample
        ``i`` over all views."""

    def test_step(self, data: Any) -> list:
        """Predict every view with the wrapped model, then merge each sample's predictions."""
        predictions = [self.module.test_step(view) for view in split_views(data)]
        lengths = [len(view_predictions) for view_predictions in predictions]
        if len(set(lengths)) > 1:
            raise ValueError(
                f"BaseTTAModel: the wrapped model returned a different number of predictions "
                f"for each augmented view ({lengths}); each view must hold the same samples"
            )
        return self.merge_preds(list(zip(*predictions, strict=True)))

    def forward(
        self, inputs: torch.Tensor, data_samples: list | None = None, mode: str = "tensor"
    ) -> Any:
        name = type(self).__name__
        raise NotImplementedError(
            f"{name}.forward will not be called in training or testing: {name} predicts "
            f"through test_step; call the wrapped model (self.module) for forward, or define "
            f"forward in {name} to use it"
        )
