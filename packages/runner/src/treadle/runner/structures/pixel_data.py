"""PixelData: per-pixel maps of one sample (segmentation, heat maps), all of one height and
width, stored as (C, H, W)."""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np
import torch

from .base_data_element import BaseDataElement
from .errors import DataElementIndexError, DataElementTypeError, DataElementValueError


def _as_slice(part: Any, axis: str, size: int) -> slice:
    if isinstance(part, slice):
        return part
    if isinstance(part, (int, np.integer)):
        position = operator.index(part)
        if size and not -size <= position < size:
            # MMEngine's crop: empty past the end, the first row or column before the start.
            warnings.warn(
                f"PixelData {axis} index {position} is out of range for {axis}s 0 to "
                f"{size - 1}: the crop is empty or clamped",
                stacklevel=4,
            )
        # A slice of one keeps the dimension, so the values stay (C, H, W).
        return slice(position, None, size) if size else slice(position, position + 1)
    raise TypeError(
        f"PixelData {axis} index must be an int or a slice (The type of element in input must "
        f"be int or slice, but got {type(part)}): {part!r}"
    )


class PixelData(BaseDataElement):
    """Maps of equal height and width; a 2-D value (H, W) is stored as (1, H, W).

    Index with ``[rows, columns]`` (ints or slices) to crop every map at once.

    Example:
        >>> import torch
        >>> pixels = PixelData(metainfo=dict(img_id=7), heatmaps=torch.rand(3, 20, 30))
        >>> pixels.seg_map = torch.zeros(1, 20, 30)
        >>> pixels.shape
        (20, 30)
        >>> pixels[5:10, 0:4].heatmaps.shape
        torch.Size([3, 5, 4])
    """

    def _checked_data(self, name: str, value: Any) -> Any:
        if not isinstance(value, (torch.Tensor, np.ndarray)):
            raise DataElementTypeError(
                f"PixelData field {name!r}: Can not set {type(value)}, only support "
                f"torch.Tensor or numpy.ndarray, got {value!r}"
            )
        if value.ndim not in (2, 3):
            raise DataElementValueError(
                f"PixelData field {name!r} must be (H, W) or (C, H, W): The dim of value must "
                f"be 2 or 3, but got {value.ndim} (shape {tuple(value.shape)})"
            )
        reference = self._another_data_field(name)
        if reference is not None:
            expected = tuple(getattr(self, reference).shape[-2:])
            if tuple(value.shape[-2:]) != expected:
                raise DataElementValueError(
                    f"PixelData field {name!r} has height and width {tuple(value.shape[-2:])}, "
                    f"but field {reference!r} has {expected}: the height and width of values "
                    f"is not consistent with the shape of this :obj:`PixelData`"
                )
        if value.ndim == 2:
            warnings.warn(
                f"PixelData field {name!r}: the shape of value will convert from "
                f"{tuple(value.shape)} to {(1, *value.shape)}",
                stacklevel=4,
            )
            value = value[None]
        return value

    @property
    def shape(self) -> tuple[int, int] | None:
        """(height, width) of the maps, or None while there are none."""
        for name in self._data_names:
            return tuple(getattr(self, name).shape[-2:])
        return None

    def __getitem__(self, item: tuple[Any, Any]) -> PixelData:
        """A PixelData of the crop ``[rows, columns]`` of every map (views, not copies)."""
        if not isinstance(item, tuple):
            raise TypeError(
                f"Unsupported type {type(item)} for slicing PixelData: it is indexed with "
                f"[rows, columns], got {item!r}"
            )
        if len(item) != 2:
            raise DataElementIndexError(
                f"PixelData is indexed with [rows, columns] (Only support to slice height and "
                f"width): 2 indices, got {len(item)}"
            )
        height, width = self.shape or (0, 0)
        crop = (
            slice(None),
            _as_slice(item[0], "row", height),
            _as_slice(item[1], "column", width),
        )
        cropped = type(self)(metainfo=self.metainfo)
        cropped.set_data({name: value[crop] for name, value in self.items()})
        return cropped
