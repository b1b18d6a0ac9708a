"""``draw_points``, ``draw_lines``, ``draw_circles``, ``draw_bboxes``, ``draw_polygons``.

Each call becomes one matplotlib collection, however many items it draws: one artist for a
hundred boxes renders in a fraction of the time of a hundred patches.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .colors import colors_per_item
from .draw_args import (
    alpha_value,
    as_array,
    as_rows,
    per_item,
    per_item_numbers,
    warn_flipped,
    warn_outside,
)
from .errors import VisualValueError
from .mmengine_checks import require_array


def rgba_array(rgbs: list, alpha: float) -> np.ndarray:
    """(N, 4) RGBA with ``alpha`` baked in; 'none' (None) items are fully transparent.

    The alpha goes into the colours rather than ``Collection.set_alpha``, which would also
    make 'none' faces visible.
    """
    rgba = np.zeros((len(rgbs), 4))
    for row, rgb in zip(rgba, rgbs, strict=True):
        if rgb is not None:
            row[:3], row[3] = rgb, alpha
    return rgba


class ShapeDrawingMixin:
    """The point, line, circle, box and polygon methods of the Visualizer.

    matplotlib is imported in the methods that draw, not with this module: the Visualizer's
    class needs this mixin, and a training run that only logs scalars must not pay for
    matplotlib's import (about half a second).
    """

    def draw_points(
        self,
        positions: Any,
        colors: str | tuple | list = "g",
        marker: str | None = None,
        sizes: Any = None,
    ) -> Any:
        """Draw markers at ``positions`` ((N, 2) x, y); ``sizes`` in points², per point."""
        from matplotlib import rcParams
        from matplotlib.collections import PathCollection
        from matplotlib.markers import MarkerStyle
        from matplotlib.transforms import IdentityTransform

        canvas = self._canvas_with_image("draw_points")
        require_array("positions", positions)
        points = as_rows("positions", positions, 2, "x, y of each point")
        warn_outside("points", points[:, None], self.width, self.height, "point")
        count = len(points)
        rgba = rgba_array(colors_per_item(colors, count, "colors", rule="exact"), 1.0)
        if sizes is None:
            areas = np.full(count, rcParams["lines.markersize"] ** 2)
        else:
            areas = np.broadcast_to(as_array("sizes", sizes).reshape(-1), (count,))
        style = MarkerStyle(rcParams["scatter.marker"] if marker is None else marker)
        path = style.get_path().transformed(style.get_transform())
        collection = PathCollection(
            [path],
            sizes=areas,
            offsets=points,
            offset_transform=canvas.axes.transData,
            facecolors=rgba if style.is_filled() else "none",
            edgecolors=rgba,
            # Unfilled markers ('x', '+') are strokes: matplotlib's scatter, which MMEngine
            # uses, strokes them with the line width, not the thinner patch width.
            linewidths=rcParams["patch.linewidth" if style.is_filled() else "lines.linewidth"],
            transform=IdentityTransform(),
        )
        canvas.add(collection)
        return self

    def draw_lines(
        self,
        x_datas: Any,
        y_datas: Any,
        colors: str | tuple | list = "g",
        line_styles: str | list[str] = "-",
        line_widths: int | float | list = 2,
    ) -> Any:
        """Draw segments from (x_datas[i, 0], y_datas[i, 0]) to (x_datas[i, 1], y_datas[i, 1])."""
        from matplotlib.collections import LineCollection

        canvas = self._canvas_with_image("draw_lines")
        require_array("x_datas", x_datas)
        require_array("y_datas", y_datas)
        xs = as_rows("x_datas", x_datas, 2, "x of the start and end of each line")
        ys = as_rows("y_datas", y_datas, 2, "y of the start and end of each line")
        if xs.shape != ys.shape:
            raise VisualValueError(
                f"x_datas and y_datas must have the same shape, got {xs.shape} and {ys.shape}"
            )
        segments = np.stack([xs, ys], axis=-1)  # (N, 2 ends, x/y)
        warn_outside("lines", segments, self.width, self.height, "line")
        count = len(segments)
        collection = LineCollection(
            segments,
            colors=rgba_array(colors_per_item(colors, count, "colors", rule="cycle"), 1.0),
            linestyles=per_item("line_styles", line_styles, count, (str, tuple), "cycle"),
            linewidths=per_item_numbers("line_widths", line_widths, count, "cycle"),
        )
        canvas.add(collection)
        return self

    def draw_circles(
        self,
        center: Any,
        radius: Any,
        edge_colors: str | tuple | list = "g",
        line_styles: str | list[str] = "-",
        line_widths: int | float | list = 2,
        face_colors: str | tuple | list = "none",
        alpha: float = 0.8,
    ) -> Any:
        """Draw circles of ``radius`` (N,) around ``center`` (N, 2), in pixels."""
        from matplotlib.collections import PatchCollection
        from matplotlib.patches import Circle

        canvas = self._canvas_with_image("draw_circles")
        require_array("center", center)
        require_array("radius", radius)
        centers = as_rows("center", center, 2, "x, y of each centre")
        radii = as_array("radius", radius).reshape(-1)
        if len(radii) != len(centers):
            raise VisualValueError(
                f"radius must have one value per centre: {len(centers)} centres, got radius "
                f"of shape {np.shape(radius)}"
            )
        reach = np.stack([centers - radii[:, None], centers + radii[:, None]], axis=1)
        warn_outside("circles", reach, self.width, self.height, "circle")
        count = len(centers)
        collection = PatchCollection(
            [Circle((x, y), r) for (x, y), r in zip(centers.tolist(), radii.tolist(), strict=True)],
            **self._outline_style(count, edge_colors, face_colors, line_styles, line_widths, alpha),
        )
        canvas.add(collection)
        return self

    def draw_bboxes(
        self,
        bboxes: Any,
        edge_colors: str | tuple | list = "g",
        line_styles: str | list[str] = "-",
        line_widths: int | float | list = 2,
        face_colors: str | tuple | list = "none",
        alpha: float = 0.8,
    ) -> Any:
        """Draw boxes given as (N, 4) rows of x1, y1, x2, y2 in pixels; returns self."""
        self._canvas_with_image("draw_bboxes")
        require_array("bboxes", bboxes)
        boxes = as_rows("bboxes", bboxes, 4, "x1, y1, x2, y2 of each box")
        # MMEngine asserts x1 <= x2 and y1 <= y2. An untrained detector predicts such boxes, and
        # a visualization hook must not stop the run for them: warn, and draw the rectangle the
        # two corners span.
        warn_flipped(boxes)
        corners = boxes[:, [0, 1, 2, 1, 2, 3, 0, 3]].reshape(-1, 4, 2)
        warn_outside("bboxes", corners, self.width, self.height, "bbox")
        return self._add_polygons(
            corners, edge_colors, line_styles, line_widths, face_colors, alpha
        )

    def draw_polygons(
        self,
        polygons: Any,
        edge_colors: str | tuple | list = "g",
        line_styles: str | list[str] = "-",
        line_widths: int | float | list = 2,
        face_colors: str | tuple | list = "none",
        alpha: float = 0.8,
    ) -> Any:
        """Draw polygons: one (M, 2) array of x, y vertices, or a list of them."""
        self._canvas_with_image("draw_polygons")
        if not isinstance(polygons, (list, tuple)):
            polygons = [polygons]
        elif isinstance(polygons, tuple):
            require_array("polygons", polygons)  # MMEngine takes a list, an array or a tensor
        shapes = []
        for index, polygon in enumerate(polygons):
            require_array(f"polygons[{index}]", polygon)
            vertices = as_array(f"polygons[{index}]", polygon)
            if vertices.ndim != 2 or vertices.shape[1] != 2:
                raise VisualValueError(
                    f"each polygon must have shape (M, 2) (x, y of each vertex); "
                    f"polygons[{index}] has shape {vertices.shape}"
                )
            shapes.append(vertices)
            warn_outside(f"polygons[{index}]", vertices[None], self.width, self.height, "polygon")
        return self._add_polygons(shapes, edge_colors, line_styles, line_widths, face_colors, alpha)

    def _add_polygons(
        self,
        shapes: Any,
        edge_colors: Any,
        line_styles: Any,
        line_widths: Any,
        face_colors: Any,
        alpha: float,
    ) -> Any:
        from matplotlib.collections import PolyCollection

        style = self._outline_style(
            len(shapes), edge_colors, face_colors, line_styles, line_widths, alpha
        )
        self._canvas.add(PolyCollection(shapes, **style))
        return self

    def _outline_style(
        self,
        count: int,
        edge_colors: Any,
        face_colors: Any,
        line_styles: Any,
        line_widths: Any,
        alpha: float,
    ) -> dict:
        """Collection keywords shared by circles, boxes and polygons.

        Widths are clamped to [1, default font size / 4] as MMEngine does, so outlines stay
        visible on small images and do not swamp large ones.
        """
        widths = per_item_numbers("line_widths", line_widths, count, "cycle")
        limit = self._default_font_size / 4
        alpha = alpha_value("alpha", alpha)
        edges = colors_per_item(edge_colors, count, "edge_colors", True, "cycle")
        faces = colors_per_item(face_colors, count, "face_colors", True, "cycle")
        return dict(
            edgecolors=rgba_array(edges, alpha),
            facecolors=rgba_array(faces, alpha),
            linestyles=per_item("line_styles", line_styles, count, (str, tuple), "cycle"),
            linewidths=[min(max(width, 1), limit) for width in widths],
        )
