"""LabelData: the labels of one sample (classification), with one-hot conversions."""

from __future__ import annotations

import numbers
import warnings

import torch

from .base_data_element import BaseDataElement
from .errors import DataElementTypeError, DataElementValueError, LabelDtypeError, LabelShapeError


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
        """The positions of the non-zero values of a 1-D one-hot (or multi-hot) tensor.

        As in MMEngine, every value must lie in [0, 1] and any non-zero one counts.
        """
        if not isinstance(onehot, torch.Tensor):
            raise DataElementTypeError(
                f"onehot must be a torch.Tensor, got {type(onehot).__name__}: {onehot!r}"
            )
        # One check, one host sync (a bool tensor always passes).
        if onehot.ndim != 1 or not bool(((onehot >= 0) & (onehot <= 1)).all()):
            raise ValueError(
                f"input is not one-hot and can not convert to label: onehot must be a 1-D "
                f"tensor of values in [0, 1], got shape {tuple(onehot.shape)}: {onehot}"
            )
        return onehot.nonzero().view(-1)

    @staticmethod
    def label_to_onehot(label: torch.Tensor, num_classes: int) -> torch.Tensor:
        """A ``(num_classes,)`` tensor of label's dtype with ones at the positions in ``label``.

        A negative label counts from the end, as a Python index does (and as in MMEngine); it
        is most likely an ignore label, so it warns. A boolean ``label`` is a mask of classes.
        """
        if not isinstance(label, torch.Tensor):
            raise DataElementTypeError(
                f"label must be a torch.Tensor, got {type(label).__name__}: {label!r}"
            )
        if isinstance(num_classes, bool) or not isinstance(num_classes, numbers.Integral):
            raise TypeError(
                f"num_classes must be an int, got {type(num_classes).__name__}: {num_classes!r}"
            )
        if num_classes <= 0:
            raise DataElementValueError(f"num_classes must be positive, got {num_classes}")
        if label.ndim > 1:
            raise LabelShapeError(f"label must be 0-D or 1-D, got shape {tuple(label.shape)}")
        if label.is_floating_point() or label.is_complex():
            raise LabelDtypeError(f"label must hold integer class indices, got {label.dtype}")
        if label.numel() and label.dtype != torch.bool:
            _check_range(label, num_classes)
        onehot = label.new_zeros((int(num_classes),))
        onehot[label] = 1
        return onehot


def _check_range(label: torch.Tensor, num_classes: int) -> None:
    low, high = (int(bound) for bound in torch.aminmax(label))
    if high >= num_classes:
        raise DataElementValueError(
            f"label {high} is out of range for num_classes={num_classes} "
            f"(labels go from 0 to {num_classes - 1})"
        )
    if low < -num_classes:
        raise IndexError(
            f"label {low} is out of range for num_classes={num_classes} "
            f"(labels go from 0 to {num_classes - 1})"
        )
    if low < 0:
        warnings.warn(
            f"label {low} is negative: it marks class {num_classes + low} of {num_classes}, "
            f"counted from the end (is it an ignore label?)",
            stacklevel=3,
        )
