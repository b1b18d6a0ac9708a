"""PixelData: per-pixel maps of one sample (segmentation, heat maps), all of one height and
width, stored as (C, H, W)."""

from __future__ import annotations

import operator
import warnings
from typing import Any

import numpy as np
import torch

from .base_data_element import BaseDataElement


def _as_slice(part: Any, axis: str, size: int) -> slice:
    if isinstance(part, slice):
        return part
    if isinstance(part, (int, np.integer)) and not isinstance(part, bool):
        position = operator.index(part)
        if not -size <= position < size:
            raise IndexError(f"{axis} index {position} is out of range for PixelData {axis} {size}")
        position %= size
        # A slice of one keeps the dimension, so the values stay (C, H, W).
        return slice(position, position + 1)
    raise TypeError(
        f"PixelData {axis} index must be an int or a slice, got {type(part).__name__}: {part!r}"
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
            raise TypeError(
                f"PixelData field {name!r} must be a torch.Tensor or a numpy.ndarray, got "
                f"{type(value).__name__}: {value!r}"
            )
        if value.ndim not in (2, 3):
            raise ValueError(
                f"PixelData field {name!r} must be (H, W) or (C, H, W), got {value.ndim} "
                f"dimensions: shape {tuple(value.shape)}"
            )
        reference = self._another_data_field(name)
        if reference is not None:
            expected = tuple(getattr(self, reference).shape[-2:])
            if tuple(value.shape[-2:]) != expected:
                raise ValueError(
                    f"PixelData field {name!r} has height and width {tuple(value.shape[-2:])}, "
                    f"but field {reference!r} has {expected}"
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
        for name in self._data_fields:
            return tuple(getattr(self, name).shape[-2:])
        return None

    def __getitem__(self, item: tuple[Any, Any]) -> PixelData:
        """A PixelData of the crop ``[rows, columns]`` of every map (views, not copies)."""
        if not isinstance(item, tuple):
            raise TypeError(
                f"PixelData is indexed with [rows, columns], got {type(item).__name__}: {item!r}"
            )
        if len(item) != 2:
            raise IndexError(
                f"PixelData is indexed with [rows, columns]: 2 indices, got {len(item)}"
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
