"""The matplotlib side of ``draw_texts``: the artist that blits pre-rendered labels, the
label boxes, and the matplotlib ``Text`` used where the glyph cache cannot draw a text exactly.

Kept apart from draw_texts.py so that the Visualizer's class (which includes that mixin) can
be imported without matplotlib: this module is imported on the first ``draw_texts`` call.
"""

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


_PLAIN_BOX_KEYS = {"facecolor", "fc", "alpha", "pad", "edgecolor", "ec", "boxstyle"}


def plain_box(props: dict, size: float, dpi: float) -> tuple[np.ndarray, int] | None:
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


def background_box(
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


def matplotlib_text(
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
