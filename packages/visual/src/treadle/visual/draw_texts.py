"""``draw_texts``: labels from cached glyph bitmaps, in order with every other drawing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .colors import colors_per_item
from .draw_args import as_rows, per_item, per_item_numbers, warn_outside
from .errors import VisualValueError
from .mmengine_checks import require_array

if TYPE_CHECKING:
    from matplotlib.font_manager import FontProperties

_VERTICAL = ("top", "bottom", "center", "baseline", "center_baseline")
_HORIZONTAL = ("left", "center", "right")


class TextDrawingMixin:
    """The ``draw_texts`` method of :class:`~treadle.visual.Visualizer`.

    matplotlib (and the modules built on it: text_render, text_raster) is imported when a text
    is drawn, not with this module: the Visualizer's class needs this mixin, and a training run
    that only logs scalars must not pay for matplotlib's import (about half a second).
    """

    def draw_texts(
        self,
        texts: str | list[str],
        positions: Any,
        font_sizes: int | float | list | None = None,
        colors: str | tuple | list = "g",
        vertical_alignments: str | list[str] = "top",
        horizontal_alignments: str | list[str] = "left",
        font_families: str | list[str] = "sans-serif",
        bboxes: dict | list[dict] | None = None,
        font_properties: FontProperties | list | None = None,
    ) -> Any:
        """Draw one text per row of ``positions`` ((N, 2) x, y in pixels); returns self.

        Every per-text argument takes one value for all texts or a list with one per text.
        ``font_sizes`` are in points (default: grows with the image, at least 10);
        ``bboxes`` are matplotlib ``FancyBboxPatch`` properties of a box behind each text
        (``dict(facecolor='black', alpha=0.8, pad=0.7, edgecolor='none')``).
        """
        from matplotlib.font_manager import FontProperties

        from .text_raster import GlyphFont
        from .text_render import TextStamps, background_box, matplotlib_text, plain_box

        canvas = self._canvas_with_image("draw_texts")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise TypeError(f"texts must be a str or a list of str, got {texts!r:.80}")
        count = len(texts)
        require_array("positions", positions)
        points = as_rows("positions", positions, 2, "x, y of each text")
        if len(points) != count:
            raise VisualValueError(
                f"positions must have shape ({count}, 2), one row per text, got shape "
                f"{points.shape}"
            )
        warn_outside("texts", points[:, None], self.width, self.height, "text")
        # A NaN position (warned about above) has no pixel to stamp the text at: it is skipped.
        finite = np.isfinite(points).all(axis=1).tolist()
        sizes = per_item_numbers(
            "font_sizes", self._default_font_size if font_sizes is None else font_sizes, count
        )
        rgbs = colors_per_item(colors, count, "colors")
        verticals = _choices("vertical_alignments", vertical_alignments, count, _VERTICAL)
        horizontals = _choices("horizontal_alignments", horizontal_alignments, count, _HORIZONTAL)
        families = per_item("font_families", font_families, count, (str,))
        boxes = [None] * count if bboxes is None else per_item("bboxes", bboxes, count, (dict,))
        props = (
            [None] * count
            if font_properties is None
            else per_item("font_properties", font_properties, count, (FontProperties,))
        )
        stamps: TextStamps | None = None
        for i, text in enumerate(texts):
            if not finite[i]:
                continue
            font = GlyphFont.for_family(families[i], sizes[i], canvas.dpi)
            if props[i] is not None or _is_math(text) or not font.has_glyphs(text):
                # What the glyph cache cannot do exactly, matplotlib draws itself.
                canvas.add(
                    matplotlib_text(
                        points[i],
                        text,
                        sizes[i],
                        rgbs[i],
                        verticals[i],
                        horizontals[i],
                        families[i],
                        boxes[i],
                        props[i],
                    )
                )
                stamps = None
                continue
            if stamps is None:
                stamps = TextStamps()
                canvas.add(stamps)
            rendered = font.render(text, horizontals[i])
            mask = rendered.mask
            height, width = mask.shape
            left = _aligned(points[i][0], width, horizontals[i], {"left": 0, "right": 1})
            top = _top(points[i][1], height, rendered.ascent, verticals[i])
            fill = None if boxes[i] is None else plain_box(boxes[i], sizes[i], canvas.dpi)
            if fill is not None:
                rgba, left, top = _stamp_on_box(mask, rgbs[i], left, top, *fill)
                stamps.items.append((rgba, left, top, None))
                continue
            rgba = np.empty((height, width, 4), dtype=np.uint8)
            rgba[..., :3] = np.round(np.asarray(rgbs[i]) * 255).astype(np.uint8)
            rgba[..., 3] = mask
            box = None
            if boxes[i] is not None:
                box = background_box(
                    boxes[i], left, top, width, height, sizes[i], canvas.dpi, canvas.pixel_height
                )
            stamps.items.append((rgba, left, top, box))
        return self


def _choices(name: str, value: Any, count: int, allowed: tuple[str, ...]) -> list[str]:
    values = per_item(name, value, count, (str,))
    for value_ in values:
        if value_ not in allowed:
            raise ValueError(f"{name}: {value_!r} is not one of {', '.join(allowed)}")
    return values


def _aligned(x: float, size: int, alignment: str, fractions: dict[str, float]) -> int:
    return round(x - size * fractions.get(alignment, 0.5))


def _top(y: float, height: int, ascent: int, alignment: str) -> int:
    if alignment == "top":
        return round(y)
    if alignment == "bottom":
        return round(y - height)
    if alignment == "baseline":
        return round(y - ascent)
    return round(y - height / 2)


def _stamp_on_box(
    mask: np.ndarray, rgb: Any, left: int, top: int, face: np.ndarray, pad: int
) -> tuple[np.ndarray, int, int]:
    """The text over its background box as one straight-alpha RGBA bitmap."""
    height, width = mask.shape
    text_alpha = np.zeros((height + 2 * pad, width + 2 * pad, 1), dtype=np.float32)
    text_alpha[pad : pad + height, pad : pad + width, 0] = mask / np.float32(255)
    face_alpha = np.float32(face[3]) * (1 - text_alpha)
    alpha = text_alpha + face_alpha
    colour = (
        np.asarray(rgb, dtype=np.float32) * text_alpha + face[:3].astype(np.float32) * face_alpha
    )
    np.divide(colour, alpha, out=colour, where=alpha > 0)
    rgba = np.empty((*alpha.shape[:2], 4), dtype=np.uint8)
    rgba[..., :3] = np.rint(colour * 255)
    rgba[..., 3] = np.rint(alpha[..., 0] * 255)
    return rgba, left - pad, top - pad


def _is_math(text: str) -> bool:
    # matplotlib treats text with an even, non-zero number of unescaped '$' as mathtext.
    dollars = text.count("$") - text.count(r"\$")
    return dollars > 0 and dollars % 2 == 0
