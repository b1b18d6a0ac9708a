"""MMEngine's ``ax_save`` / ``fig_save`` / ``fig_save_canvas``: toolboxes draw on them directly.

mmpretrain's UniversalVisualizer writes its labels with ``self.ax_save.text(...)`` and then
calls ``get_image()``; the text must be in that image and gone after the next ``set_image``.
"""

from __future__ import annotations

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from treadle.visual import Visualizer

BLACK = np.zeros((40, 60, 3), dtype=np.uint8)


def _visualizer() -> Visualizer:
    return Visualizer(name="ax-save", image=BLACK)


def test_the_figure_attributes_are_matplotlib_objects():
    visualizer = _visualizer()
    assert isinstance(visualizer.ax_save, Axes)
    assert isinstance(visualizer.fig_save, Figure)
    assert isinstance(visualizer.fig_save_canvas, FigureCanvasAgg)
    assert visualizer.ax_save.figure is visualizer.fig_save


def test_text_drawn_on_ax_save_is_in_get_image():
    visualizer = _visualizer()
    visualizer.ax_save.text(5, 5, "cat", color="white", size=12, verticalalignment="top")
    drawn = visualizer.get_image()
    assert drawn.shape == BLACK.shape
    assert drawn.max() > 100  # white pixels of the label
    # In image pixels: the label is near the top-left corner, nothing at the bottom right.
    assert drawn[:20, :30].max() > 100
    assert drawn[30:, 45:].max() == 0


def test_set_image_removes_what_was_drawn_on_ax_save():
    visualizer = _visualizer()
    visualizer.ax_save.text(5, 5, "cat", color="white", size=12, verticalalignment="top")
    visualizer.get_image()
    visualizer.set_image(BLACK)
    assert visualizer.get_image().max() == 0


def test_ax_save_drawings_mix_with_the_visualizer_own():
    visualizer = _visualizer()
    visualizer.draw_bboxes(np.array([[30, 20, 55, 35]]), edge_colors="r")
    visualizer.ax_save.text(2, 2, "x", color="white", size=10, verticalalignment="top")
    drawn = visualizer.get_image()
    assert drawn[:15, :20].max() > 100  # the direct text
    assert drawn[19:37, 29:57, 0].max() > 100  # the red box
