"""LabelData: the labels of one sample (classification), with one-hot conversions."""

from __future__ import annotations

import numbers

import torch

from .base_data_element import BaseDataElement


class LabelData(BaseDataElement):
    """Label fields of one sample; ``onehot_to_label`` and ``label_to_onehot`` convert them.

    Example:
        >>> import torch
        >>> labels = LabelData(metainfo=dict(num_classes=5), label=torch.tensor([1, 3]))
        >>> onehot = LabelData.label_to_onehot(labels.label, labels.num_classes)
        >>> onehot
        tensor([0, 1, 0, 1, 0])
        >>> LabelData.onehot_to_label(onehot)
        tensor([1, 3])
    """

    @staticmethod
    def onehot_to_label(onehot: torch.Tensor) -> torch.Tensor:
        """The positions of the ones in a 1-D one-hot (or multi-hot) tensor of 0s and 1s."""
        if not isinstance(onehot, torch.Tensor):
            raise TypeError(
                f"onehot must be a torch.Tensor, got {type(onehot).__name__}: {onehot!r}"
            )
        # One check, one host sync: every value is 0 or 1 (a bool tensor always is).
        if onehot.ndim != 1 or not bool(((onehot == 0) | (onehot == 1)).all()):
            raise ValueError(
                f"onehot must be a 1-D tensor of 0s and 1s, got shape {tuple(onehot.shape)}: "
                f"{onehot}"
            )
        return onehot.nonzero().view(-1)

    @staticmethod
    def label_to_onehot(label: torch.Tensor, num_classes: int) -> torch.Tensor:
        """A ``(num_classes,)`` tensor of label's dtype with ones at the positions in ``label``."""
        if not isinstance(label, torch.Tensor):
            raise TypeError(f"label must be a torch.Tensor, got {type(label).__name__}: {label!r}")
        if isinstance(num_classes, bool) or not isinstance(num_classes, numbers.Integral):
            raise TypeError(
                f"num_classes must be an int, got {type(num_classes).__name__}: {num_classes!r}"
            )
        if num_classes <= 0:
            raise ValueError(f"num_classes must be positive, got {num_classes}")
        if label.ndim > 1:
            raise ValueError(f"label must be 0-D or 1-D, got shape {tuple(label.shape)}")
        if label.is_floating_point() or label.is_complex() or label.dtype == torch.bool:
            raise TypeError(f"label must hold integer class indices, got {label.dtype}")
        if label.numel():
            low, high = torch.aminmax(label)
            low, high = int(low), int(high)
            if low < 0 or high >= num_classes:
                bad = low if low < 0 else high
                raise ValueError(
                    f"label {bad} is out of range for num_classes={num_classes} "
                    f"(labels go from 0 to {num_classes - 1})"
                )
        onehot = label.new_zeros((int(num_classes),))
        onehot[label] = 1
        return onehot
