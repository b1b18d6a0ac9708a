"""The dataset wrappers, where ``mmengine.dataset.dataset_wrapper`` has them."""

from __future__ import annotations

from .class_balanced_dataset import ClassBalancedDataset
from .concat_dataset import ConcatDataset
from .repeat_dataset import RepeatDataset

__all__ = ["ClassBalancedDataset", "ConcatDataset", "RepeatDataset"]
