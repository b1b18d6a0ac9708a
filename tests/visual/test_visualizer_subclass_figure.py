"""Issue 41: visualizers written for MMEngine that handle the image themselves.

A toolbox's OpenCV-backed visualizer assigns ``self.width`` and ``self.height`` in its own
``set_image`` (they are plain attributes in MMEngine), and, with its matplotlib backend,
prepares the figure itself (``ax_save.cla()``, ``ax_save.imshow(image)``) before drawing with
the Visualizer's methods; ``img_from_canvas`` renders a canvas that was never drawn.
"""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from treadle.visual import Visualizer
from treadle.visual.utils import img_from_canvas

RED = (255, 0, 0)


class SelfSizedVisualizer(Visualizer):
    """As a toolbox's OpenCV visualizer: ``set_image`` keeps the image itself and assigns the
    size; with ``backend='matplotlib'`` it prepares MMEngine's figure the way MMEngine does."""

    def __init__(self, name: str = "visualizer", backend: str = "opencv", **kwargs) -> None:
        self.backend = backend  # before the image given to __init__ is set
        super().__init__(name, **kwargs)

    def set_image(self, image: np.ndarray) -> None:
        image = image.astype("uint8")
        self._image = image
        self.width, self.height = image.shape[1], image.shape[0]
        self._default_font_size = max(np.sqrt(self.height * self.width) // 90, 10)
        if self.backend == "matplotlib":
            self.fig_save.set_size_inches(
                (self.width + 1e-2) / self.dpi, (self.height + 1e-2) / self.dpi
            )
            self.ax_save.cla()
            self.ax_save.axis(False)
            self.ax_save.imshow(image, extent=(0, self.width, self.height, 0), interpolation="none")

    def get_image(self) -> np.ndarray:
        if self.backend == "matplotlib":
            return super().get_image()
        return self._image

    def draw_bboxes(self, bboxes, edge_colors="g", line_widths=2, **kwargs):
        if self.backend == "matplotlib":
            return super().draw_bboxes(bboxes, edge_colors=edge_colors, line_widths=line_widths)
        x1, y1, x2, y2 = (int(v) for v in np.asarray(bboxes).reshape(4))
        self._image = self._image.copy()
        self._image[y1 : y2 + 1, [x1, x2]] = edge_colors
        self._image[[y1, y2], x1 : x2 + 1] = edge_colors
        return self


def test_width_and_height_can_be_assigned_and_set_image_resets_them() -> None:
    vis = Visualizer(image=np.zeros((4, 6, 3), np.uint8))
    vis.width, vis.height = 60, 40
    assert (vis.width, vis.height) == (60, 40)
    vis.set_image(np.zeros((5, 7, 3), np.uint8))
    assert (vis.width, vis.height) == (7, 5)


def test_an_opencv_style_subclass_sets_the_size_and_draws() -> None:
    image = np.zeros((30, 40, 3), np.uint8)
    vis = SelfSizedVisualizer(image=image)
    assert (vis.width, vis.height) == (40, 30)
    drawn = vis.draw_bboxes(np.array([5, 5, 20, 15]), edge_colors=RED).get_image()
    assert tuple(drawn[10, 5]) == RED and not drawn[10, 10].any()


def test_a_subclass_that_prepares_the_figure_draws_with_the_visualizer_methods() -> None:
    image = np.zeros((30, 40, 3), np.uint8)
    image[:, :20] = 200  # a left half to find again
    vis = SelfSizedVisualizer(backend="matplotlib", image=image)
    vis.draw_bboxes(np.array([5, 5, 30, 25]), edge_colors=RED)
    vis.draw_texts("a", np.array([32, 2]), colors=(0, 0, 255))
    drawn = vis.get_image()
    assert drawn.shape == (30, 40, 3)
    assert tuple(drawn[2, 2]) == (200, 200, 200) and tuple(drawn[28, 38]) == (0, 0, 0)
    assert drawn[15, 4:7, 0].max() > 150  # the box's left edge, in red
    assert drawn[:12, 30:, 2].max() > 100  # the blue text
    # Out-of-image warnings use the size the subclass assigned.
    with pytest.warns(UserWarning, match=r"\(width 40, height 30\)"):
        vis.draw_bboxes(np.array([5, 5, 50, 25]))


def test_a_prepared_figure_takes_masks_and_the_next_image() -> None:
    image = np.zeros((20, 20, 3), np.uint8)
    vis = SelfSizedVisualizer(backend="matplotlib", image=image)
    mask = np.zeros((20, 20), bool)
    mask[5:10, 5:10] = True
    drawn = vis.draw_binary_masks(mask, colors=RED, alphas=1.0).get_image()
    assert tuple(drawn[7, 7]) == RED and not drawn[15, 15].any()
    # The next image (prepared again) starts clean: nothing drawn before is left.
    vis.set_image(np.full((10, 12, 3), 9, np.uint8))
    again = vis.get_image()
    assert again.shape == (10, 12, 3) and (again == 9).all()
    # And the Visualizer's own set_image puts the canvas back in order.
    Visualizer.set_image(vis, np.full((8, 6, 3), 50, np.uint8))
    out = Visualizer.get_image(vis.draw_bboxes(np.array([1, 1, 4, 4]), edge_colors=RED))
    assert out.shape == (8, 6, 3) and tuple(out[7, 5]) == (50, 50, 50)
    assert (vis.width, vis.height) == (6, 8)


def test_drawing_without_any_image_is_still_refused() -> None:
    with pytest.raises(RuntimeError, match=r"draw_bboxes: no image to draw on"):
        Visualizer().draw_bboxes(np.array([1, 1, 2, 2]))


def test_img_from_canvas_renders_a_canvas_never_drawn() -> None:
    figure = Figure(figsize=(2, 1), dpi=10)
    canvas = FigureCanvasAgg(figure)
    assert img_from_canvas(canvas).shape == (10, 20, 3)


def test_img_from_canvas_shows_what_was_drawn_since_the_last_render() -> None:
    vis = Visualizer(image=np.zeros((10, 10, 3), np.uint8))
    before = img_from_canvas(vis.fig_save_canvas)
    vis.ax_save.add_patch(Rectangle((-1, -1), 12, 12, color="white"))
    after = img_from_canvas(vis.fig_save_canvas)
    assert not before.any() and after.min() == 255
