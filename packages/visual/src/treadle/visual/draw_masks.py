"""``draw_binary_masks``: blend boolean masks into the image under the other drawings."""

from __future__ import annotations

from typing import Any

import numpy as np

from .colors import colors_per_item
from .draw_args import alpha_value, per_item


class MaskDrawingMixin:
    """The ``draw_binary_masks`` method of the Visualizer."""

    def draw_binary_masks(
        self,
        binary_masks: Any,
        colors: str | tuple | list = "g",
        alphas: float | list[float] = 0.8,
    ) -> Any:
        """Tint the pixels of each bool mask ((N, H, W) or (H, W)) with its colour; returns self.

        A masked pixel becomes ``(1 - alpha) * pixel + alpha * colour``, the others are left as
        they are. Masks are blended into the image itself, so boxes, texts and other drawings
        (made before or after) stay visible on top of them, as in MMEngine.
        """
        canvas = self._canvas_with_image("draw_binary_masks")
        if hasattr(binary_masks, "detach") and hasattr(binary_masks, "cpu"):
            binary_masks = binary_masks.detach().cpu().numpy()
        if not isinstance(binary_masks, np.ndarray):
            raise TypeError(
                "binary_masks must be a bool numpy array or tensor of shape (N, H, W), got "
                f"{type(binary_masks).__name__}"
            )
        if binary_masks.dtype != np.bool_:
            raise TypeError(
                f"binary_masks must have dtype bool, got {binary_masks.dtype} "
                "(use masks.astype(bool))"
            )
        if binary_masks.size == 0:
            # No instances predicted: nothing to blend, whatever the empty array's shape.
            return self
        masks = binary_masks[None] if binary_masks.ndim == 2 else binary_masks
        expected = (canvas.height, canvas.width)
        if masks.ndim != 3 or masks.shape[1:] != expected:
            raise ValueError(
                f"binary_masks must have shape (N, {expected[0]}, {expected[1]}) or "
                f"({expected[0]}, {expected[1]}) to match the image (height, width), got "
                f"shape {binary_masks.shape}"
            )
        count = len(masks)
        rgbs = colors_per_item(colors, count, "colors")
        if isinstance(alphas, np.ndarray):
            alphas = alphas.tolist()
        opacities = [
            alpha_value(f"alphas[{i}]" if isinstance(alphas, list) else "alphas", alpha)
            for i, alpha in enumerate(per_item("alphas", alphas, count, (int, float)))
        ]
        image = canvas.image.copy()
        for mask, rgb, alpha in zip(masks, rgbs, opacities, strict=True):
            pixels = image[mask].astype(np.float32)
            # Whole 0-255 values, as MMEngine converts named colours.
            colour = np.floor(np.asarray(rgb) * 255 + 1e-6).astype(np.float32)
            image[mask] = np.rint(pixels * (1 - alpha) + colour * alpha).astype(np.uint8)
        canvas.replace_background(image)
        return self
