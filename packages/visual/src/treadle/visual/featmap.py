"""``draw_featmap``: a feature map (C, H, W) as a JET heatmap, optionally over an image."""

from __future__ import annotations

import functools
import warnings
from typing import Any

import numpy as np

from .draw_args import blend_weight
from .errors import VisualTypeError, VisualValueError
from .image_check import check_image
from .mmengine_checks import MMEngineChecks

REDUCTIONS = ("squeeze_mean", "select_max")
# The channel labels of the top-k grid: 10 pt black, baseline 15 px from each tile's top.
_LABEL_POINTS, _LABEL_DPI, _LABEL_XY = 10, 100, (2, 15)


def draw_featmap(
    featmap: Any,
    overlaid_image: np.ndarray | None = None,
    channel_reduction: str | None = "squeeze_mean",
    topk: int = 20,
    arrangement: tuple[int, int] = (4, 5),
    resize_shape: tuple[int, int] | None = None,
    alpha: float = 0.5,
) -> np.ndarray:
    """Render ``featmap`` (a tensor of shape (C, H, W)) as an RGB uint8 heatmap.

    - ``channel_reduction='squeeze_mean'`` averages the channels, ``'select_max'`` keeps the
      channel with the largest sum; the result is one heatmap.
    - ``channel_reduction=None`` and ``topk > 0``: the ``topk`` channels with the largest sums,
      one heatmap each, laid out in an ``arrangement`` (rows, cols) grid, labelled with their
      channel index; the grid is (rows * H, cols * W).
    - ``channel_reduction=None`` and ``topk <= 0``: the map must have 1 or 3 channels and is
      shown as it is (3 channels as an RGB image).

    Values are min-max scaled to 0-255 and coloured with the JET colormap. With
    ``overlaid_image`` (RGB (H, W, 3) or grey (H, W)), each heatmap is blended into it:
    ``(1 - alpha) * image + alpha * heatmap``; a map of another size is resized to the image's
    (bilinear) with a warning. ``resize_shape`` (h, w) resizes both first.

    Example:
        >>> import torch
        >>> draw_featmap(torch.rand(8, 16, 16)).shape
        (16, 16, 3)
    """
    import torch  # treadle.visual depends on torch through treadle.dist; only here is it used
    import torch.nn.functional as F

    if isinstance(featmap, np.ndarray) and not MMEngineChecks.enabled:
        featmap = torch.from_numpy(featmap)  # beyond MMEngine, which takes tensors only
    if not isinstance(featmap, torch.Tensor):
        raise VisualTypeError(
            f"`featmap` should be torch.Tensor, but got {type(featmap)}: a feature map of "
            "shape (C, H, W)"
            + (
                " (a numpy array is refused under treadle.compat, as in MMEngine)"
                if isinstance(featmap, np.ndarray)
                else ""
            )
        )
    if featmap.ndim != 3:
        raise VisualValueError(
            f"Input dimension must be 3, but got {featmap.ndim}: featmap must have shape "
            f"(C, H, W), got shape {tuple(featmap.shape)}"
        )
    if channel_reduction is not None and channel_reduction not in REDUCTIONS:
        raise VisualValueError(
            f"channel_reduction must be one of {', '.join(map(repr, REDUCTIONS))} or None, got "
            f"{channel_reduction!r}"
        )
    alpha = blend_weight("alpha", alpha)  # outside [0, 1]: extrapolated, with a warning
    featmap = featmap.detach().cpu().float()

    def resized(tensor: Any, size: tuple[int, int]) -> Any:
        return F.interpolate(tensor[None], size=tuple(size), mode="bilinear", align_corners=False)[
            0
        ]

    if overlaid_image is not None:
        overlaid_image = check_image(overlaid_image, "overlaid_image")
        if overlaid_image.shape[:2] != tuple(featmap.shape[1:]):
            warnings.warn(
                f"the feature map's size {tuple(featmap.shape[1:])} differs from "
                f"overlaid_image's {overlaid_image.shape[:2]}; the map is resized (bilinear) "
                "to the image",
                UserWarning,
                stacklevel=2,
            )
            if resize_shape is None:
                featmap = resized(featmap, overlaid_image.shape[:2])
    if resize_shape is not None:
        featmap = resized(featmap, resize_shape)
        if overlaid_image is not None:
            as_chw = torch.from_numpy(overlaid_image).permute(2, 0, 1).float()
            overlaid_image = (
                resized(as_chw, resize_shape).round().clamp(0, 255).byte().permute(1, 2, 0).numpy()
            )

    if channel_reduction == "squeeze_mean":
        return _overlay(featmap.mean(dim=0).numpy(), overlaid_image, alpha)
    if channel_reduction == "select_max":
        strongest = int(torch.argmax(featmap.sum(dim=(1, 2))))
        return _overlay(featmap[strongest].numpy(), overlaid_image, alpha)
    if topk <= 0:
        if featmap.shape[0] not in (1, 3):
            raise VisualValueError(
                "The input tensor channel dimension must be 1 or 3 when topk is less than 1, "
                f"but the channel dimension you input is {featmap.shape[0]}, you can use the "
                "channel_reduction parameter or set topk greater than 0 to solve the error "
                "(with channel_reduction=None and topk <= 0 the feature map is shown as an "
                "image itself)"
            )
        return _overlay(
            featmap.permute(1, 2, 0).numpy().squeeze(-1)
            if featmap.shape[0] == 1
            else featmap.permute(1, 2, 0).numpy(),
            overlaid_image,
            alpha,
        )
    rows, cols = arrangement
    if rows * cols < topk:
        raise VisualValueError(
            "The product of row and col in the `arrangement` is less than topk, please set "
            f"the `arrangement` correctly: {tuple(arrangement)} has {rows * cols} cells, "
            f"fewer than topk={topk}"
        )
    count = min(topk, featmap.shape[0])
    indices = torch.topk(featmap.sum(dim=(1, 2)), count).indices.tolist()
    height, width = featmap.shape[1:]
    grid = np.full((rows * height, cols * width, 3), 255, dtype=np.uint8)
    for cell, channel in enumerate(indices):
        tile = _overlay(featmap[channel].numpy(), overlaid_image, alpha)
        _label(tile, f"channel: {channel}")
        row, col = divmod(cell, cols)
        grid[row * height : (row + 1) * height, col * width : (col + 1) * width] = tile
    return grid


def _overlay(values: np.ndarray, image: np.ndarray | None, alpha: float) -> np.ndarray:
    """Min-max scale to 0-255, colour (JET for one channel), blend into ``image``."""
    low, high = float(values.min()), float(values.max())
    scale = 255 / (high - low) if high > low else 0.0
    levels = ((values - low) * scale).astype(np.uint8)
    heat = _jet()[levels] if levels.ndim == 2 else levels
    if image is None:
        return np.ascontiguousarray(heat)
    blended = image.astype(np.float32) * (1 - alpha) + heat.astype(np.float32) * alpha
    return np.clip(np.rint(blended), 0, 255).astype(np.uint8)


@functools.lru_cache(maxsize=1)
def _jet() -> np.ndarray:
    from matplotlib import colormaps

    return np.round(colormaps["jet"](np.arange(256))[:, :3] * 255).astype(np.uint8)


def _label(tile: np.ndarray, text: str) -> None:
    """Write ``text`` in black into ``tile``, its baseline at (2, 15) as MMEngine does."""
    # text_raster renders with matplotlib's FreeType: imported here, when a label is drawn,
    # so that importing the Visualizer does not import matplotlib.
    from .text_raster import GlyphFont

    rendered = GlyphFont.for_family("sans-serif", _LABEL_POINTS, _LABEL_DPI).render(text)
    mask = rendered.mask
    x, y = _LABEL_XY[0], _LABEL_XY[1] - rendered.ascent
    height = min(mask.shape[0], tile.shape[0] - y)
    width = min(mask.shape[1], tile.shape[1] - x)
    if height <= 0 or width <= 0:
        return
    coverage = mask[:height, :width, None].astype(np.float32) / 255
    region = tile[y : y + height, x : x + width]
    region[...] = np.rint(region * (1 - coverage)).astype(np.uint8)
