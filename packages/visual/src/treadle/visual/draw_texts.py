"""``draw_texts``: labels from cached glyph bitmaps, in order with every other drawing."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib import rcParams
from matplotlib.artist import Artist
from matplotlib.colors import to_rgba
from matplotlib.font_manager import FontProperties
from matplotlib.patches import FancyBboxPatch
from matplotlib.text import Text
from matplotlib.transforms import IdentityTransform

from .colors import colors_per_item
from .draw_args import as_rows, per_item, per_item_numbers, warn_outside
from .text_raster import GlyphFont

_VERTICAL = ("top", "bottom", "center", "baseline", "center_baseline")
_HORIZONTAL = ("left", "center", "right")


class TextStamps(Artist):
    """Pre-rendered labels (RGBA, top-down) blitted at pixel positions, each over its box."""

    def __init__(self) -> None:
        super().__init__()
        self.items: list[tuple[np.ndarray, int, int, FancyBboxPatch | None]] = []

    def draw(self, renderer: Any) -> None:
        gc = renderer.new_gc()
        canvas_width, canvas_height = int(renderer.width), int(renderer.height)
        for rgba, left, top, box in self.items:
            if box is not None:
                box.set_figure(self.get_figure())
                box.draw(renderer)
            height, width = rgba.shape[:2]
            # Cut to the canvas: Agg is given only what lies on it.
            r0, c0 = max(-top, 0), max(-left, 0)
            r1 = min(height, canvas_height - top)
            c1 = min(width, canvas_width - left)
            if r0 < r1 and c0 < c1:
                piece = np.ascontiguousarray(rgba[r0:r1, c0:c1][::-1])
                renderer.draw_image(gc, left + c0, canvas_height - (top + r1), piece)
        gc.restore()


class TextDrawingMixin:
    """The ``draw_texts`` method of :class:`~treadle.visual.Visualizer`."""

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
        canvas = self._canvas_with_image("draw_texts")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            raise TypeError(f"texts must be a str or a list of str, got {texts!r:.80}")
        count = len(texts)
        points = as_rows("positions", positions, 2, "x, y of each text")
        if len(points) != count:
            raise ValueError(
                f"positions must have shape ({count}, 2), one row per text, got shape "
                f"{points.shape}"
            )
        warn_outside("texts", points[:, None], canvas.width, canvas.height)
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
                    _matplotlib_text(
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
            plain_box = None if boxes[i] is None else _plain_box(boxes[i], sizes[i], canvas.dpi)
            if plain_box is not None:
                rgba, left, top = _stamp_on_box(mask, rgbs[i], left, top, *plain_box)
                stamps.items.append((rgba, left, top, None))
                continue
            rgba = np.empty((height, width, 4), dtype=np.uint8)
            rgba[..., :3] = np.round(np.asarray(rgbs[i]) * 255).astype(np.uint8)
            rgba[..., 3] = mask
            box = None
            if boxes[i] is not None:
                box = _background_box(
                    boxes[i], left, top, width, height, sizes[i], canvas.dpi, canvas.height
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


_PLAIN_BOX_KEYS = {"facecolor", "fc", "alpha", "pad", "edgecolor", "ec", "boxstyle"}


def _plain_box(props: dict, size: float, dpi: float) -> tuple[np.ndarray, int] | None:
    """(face RGBA, pad in pixels) when ``props`` is a plain filled rectangle without edge.

    That box (MMDetection's label background) is painted into the text's own bitmap; any
    other style goes through matplotlib's FancyBboxPatch.
    """
    if not props.keys() <= _PLAIN_BOX_KEYS or props.get("boxstyle", "square") != "square":
        return None
    edge = props.get("edgecolor", props.get("ec", "none"))
    if not (isinstance(edge, str) and edge.lower() == "none"):
        return None
    face = props.get("facecolor", props.get("fc", rcParams["patch.facecolor"]))
    try:
        rgba = np.array(to_rgba(face))
    except ValueError:
        raise ValueError(f"bboxes: unknown facecolor {face!r}") from None
    if props.get("alpha") is not None:
        rgba[3] = float(props["alpha"])
    pad_points = props.get("pad", 4)  # matplotlib's default for a square text box
    return rgba, max(round(pad_points * dpi / 72), 0)


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


def _background_box(
    props: dict,
    left: int,
    top: int,
    width: int,
    height: int,
    size: float,
    dpi: float,
    canvas_height: int,
) -> FancyBboxPatch:
    """The box matplotlib's ``Text(bbox=props)`` draws: ``pad`` in points unless a style."""
    props = dict(props)
    style = props.pop("boxstyle", None)
    pad = props.pop("pad", None)
    if style is None:
        style = "square"
        pad = (4 if pad is None else pad) / size
    elif pad is None:
        pad = 0.3
    if isinstance(style, str) and "pad" not in style:
        style = f"{style},pad={pad:.2f}"
    box = FancyBboxPatch(
        (left, canvas_height - top - height),
        width,
        height,
        boxstyle=style,
        transform=IdentityTransform(),
        **props,
    )
    box.set_mutation_scale(size * dpi / 72)
    return box


def _matplotlib_text(
    point: np.ndarray,
    text: str,
    size: float,
    rgb: Any,
    vertical: str,
    horizontal: str,
    family: str,
    bbox: dict | None,
    properties: FontProperties | None,
) -> Text:
    return Text(
        float(point[0]),
        float(point[1]),
        text,
        size=size,
        color=rgb,
        verticalalignment=vertical,
        horizontalalignment=horizontal,
        family=family,
        bbox=bbox,
        fontproperties=properties,
    )


def _is_math(text: str) -> bool:
    # matplotlib treats text with an even, non-zero number of unescaped '$' as mathtext.
    dollars = text.count("$") - text.count(r"\$")
    return dollars > 0 and dollars % 2 == 0
