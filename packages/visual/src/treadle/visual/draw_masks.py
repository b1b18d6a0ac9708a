"""``draw_binary_masks``: blend boolean masks into the image under the other drawings."""

from __future__ import annotations

from typing import Any

import numpy as np

from .colors import colors_per_item
from .draw_args import blend_weight, per_item
from .errors import VisualTypeError, VisualValueError
from .mmengine_checks import MMEngineChecks
from .strict_checks import suspicious


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
        if canvas.image is None:
            # A figure the caller prepared (see Visualizer._canvas_with_image): its picture so
            # far becomes the image the masks are blended into.
            canvas.set_image(canvas.render())
        if hasattr(binary_masks, "detach") and hasattr(binary_masks, "cpu"):
            binary_masks = binary_masks.detach().cpu().numpy()
        if not isinstance(binary_masks, np.ndarray):
            raise TypeError(
                "binary_masks must be a bool numpy array or tensor of shape (N, H, W), got "
                f"{type(binary_masks).__name__}"
            )
        if binary_masks.dtype != np.bool_:
            raise VisualTypeError(
                f"binary_masks must have dtype bool, got {binary_masks.dtype} "
                "(use masks.astype(bool))"
            )
        if binary_masks.size == 0:
            # No instances predicted: nothing to blend, whatever the empty array's shape.
            return self
        masks = binary_masks[None] if binary_masks.ndim == 2 else binary_masks
        expected = (canvas.height, canvas.width)
        if masks.ndim != 3 or masks.shape[1:] != expected:
            raise VisualValueError(
                f"binary_masks must have shape (N, {expected[0]}, {expected[1]}) or "
                f"({expected[0]}, {expected[1]}) to match the image (height, width), got "
                f"shape {binary_masks.shape}"
            )
        count = len(masks)
        rgbs = colors_per_item(colors, count, "colors")
        if isinstance(alphas, np.ndarray):
            alphas = alphas.tolist()
        if MMEngineChecks.enabled and not isinstance(alphas, (float, list)):
            raise VisualTypeError(
                f"`alphas` should be (<class 'float'>, <class 'list'>), but got {type(alphas)} "
                "(MMEngine's check, on under treadle.compat)"
            )
        if isinstance(alphas, list) and 0 < len(alphas) < count:
            # MMEngine pairs masks and alphas with zip(): the masks past the last alpha are
            # not drawn.
            suspicious(
                VisualValueError(
                    f"alphas has {len(alphas)} entries but there are {count} items to draw; "
                    "give one value, or a list with one value per item"
                ),
                f"alphas has {len(alphas)} entries for {count} masks: the last "
                f"{count - len(alphas)} masks are not drawn, as in MMEngine",
            )
            count = len(alphas)
        opacities = [
            blend_weight(f"alphas[{i}]" if isinstance(alphas, list) else "alphas", alpha)
            for i, alpha in enumerate(per_item("alphas", alphas, count, (int, float)))
        ]
        image = canvas.image.copy()
        for mask, rgb, alpha in zip(masks[:count], rgbs, opacities, strict=False):
            pixels = image[mask].astype(np.float32)
            # Whole 0-255 values, as MMEngine converts named colours.
            colour = np.floor(np.asarray(rgb) * 255 + 1e-6).astype(np.float32)
            # Clipped as cv2.addWeighted saturates, for an alpha outside [0, 1].
            blended = np.clip(np.rint(pixels * (1 - alpha) + colour * alpha), 0, 255)
            image[mask] = blended.astype(np.uint8)
        canvas.replace_background(image)
        return self
