"""draw_* on both libraries: the same calls give images that look alike, and the image
handling around them (set_image, get_image, image layouts) is the same.

See tests/support/visual_parity.py for how the two libraries are compared. Skipped without
MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mmengine")

import torch
from matplotlib.font_manager import FontProperties
from visual_parity import (  # in tests/support, on pytest's sys.path
    BACKGROUND,
    BOXES,
    LIBRARIES,
    PLAIN_LABEL_BOX,
    array,
    assert_drawn_alike,
    box_mask,
    drawn_by_both,
    gradient_image,
    mm_visual,
    new_visualizer,
    tr_visual,
)

POLYGONS = [array([[10, 10], [60, 20], [40, 80]]), array([[100, 10], [150, 50], [120, 100]])]


DRAWINGS = {
    # points
    "points-default": lambda v: v.draw_points(array([[10, 10], [50, 60], [100, 30]])),
    "points-colour-name": lambda v: v.draw_points(array([[10, 10], [50, 60]]), colors="r"),
    "points-colour-list": lambda v: v.draw_points(
        array([[10, 10], [50, 60]]), colors=[(255, 0, 0), "blue"]
    ),
    "points-sizes-marker": lambda v: v.draw_points(
        array([[20, 20], [80, 60]]), colors="y", marker="s", sizes=np.array([20, 80])
    ),
    "points-one-row-tensor": lambda v: v.draw_points(torch.tensor([40.0, 30.0]), colors="m"),
    # lines
    "lines-name-width": lambda v: v.draw_lines(
        array([[10, 150], [20, 20]]), array([[10, 100], [110, 5]]), colors="r", line_widths=3
    ),
    "lines-per-item": lambda v: v.draw_lines(
        array([[10, 150], [20, 20]]),
        array([[10, 100], [110, 5]]),
        colors=["r", (0, 0, 255)],
        line_styles=["-", "--"],
        line_widths=[1, 4],
    ),
    "lines-one-row-tensor": lambda v: v.draw_lines(
        torch.tensor([5.0, 155.0]), torch.tensor([60.0, 60.0]), colors="#ff8800"
    ),
    # circles
    "circles-edge": lambda v: v.draw_circles(
        array([[50, 50], [100, 70]]), array([20, 30]), edge_colors="b"
    ),
    "circles-face-alpha": lambda v: v.draw_circles(
        array([[50, 50]]), array([20]), edge_colors=(255, 0, 0), face_colors="y", alpha=0.5
    ),
    "circles-per-item": lambda v: v.draw_circles(
        torch.tensor([[40.0, 40.0], [110.0, 70.0]]),
        torch.tensor([15.0, 25.0]),
        edge_colors=["r", "c"],
        line_widths=[1, 3],
        line_styles=["-", ":"],
    ),
    # boxes
    "bboxes-default": lambda v: v.draw_bboxes(BOXES),
    "bboxes-per-item": lambda v: v.draw_bboxes(
        BOXES, edge_colors=["r", (0, 0, 255)], line_widths=[1, 3], line_styles=["-", "--"]
    ),
    "bboxes-face-alpha": lambda v: v.draw_bboxes(BOXES, face_colors="r", alpha=0.3),
    "bboxes-face-per-item": lambda v: v.draw_bboxes(
        BOXES, edge_colors="w", face_colors=["none", (0, 255, 0)], alpha=0.6
    ),
    "bboxes-one-row-tensor": lambda v: v.draw_bboxes(
        torch.tensor([10.0, 10.0, 60.0, 50.0]), edge_colors="m"
    ),
    # The width limit is default font size / 4 = 2.5 px on a small image, in both.
    "bboxes-wide-lines-clamped": lambda v: v.draw_bboxes(BOXES, line_widths=20),
    "bboxes-thin-lines-clamped": lambda v: v.draw_bboxes(BOXES, line_widths=0.1),
    # polygons
    "polygons-list": lambda v: v.draw_polygons(POLYGONS, edge_colors=["r", "g"]),
    "polygons-one-array": lambda v: v.draw_polygons(POLYGONS[0], edge_colors="tab:orange"),
    "polygons-face-per-item": lambda v: v.draw_polygons(
        [torch.from_numpy(p) for p in POLYGONS], face_colors=["none", "b"], alpha=0.6
    ),
    # masks
    "masks-one-hw": lambda v: v.draw_binary_masks(box_mask(10, 20, 40, 50), colors="r", alphas=0.5),
    "masks-per-item": lambda v: v.draw_binary_masks(
        np.stack([box_mask(10, 20, 40, 50), box_mask(40, 60, 50, 70)]),
        colors=["r", (0, 0, 255)],
        alphas=[0.3, 0.9],
    ),
    "masks-tensor-default": lambda v: v.draw_binary_masks(torch.from_numpy(box_mask(5, 5, 60, 60))),
    "masks-hex-colour": lambda v: v.draw_binary_masks(box_mask(5, 5, 60, 60), colors="#336699"),
    # texts
    "texts-one": lambda v: v.draw_texts("hello", array([20, 20]), colors="w"),
    "texts-per-item": lambda v: v.draw_texts(
        ["ab", "cat 0.9"],
        array([[10, 10], [60, 60]]),
        colors=["r", (255, 255, 0)],
        font_sizes=[10, 14],
    ),
    "texts-plain-box": lambda v: v.draw_texts(
        "person 0.87", array([10, 40]), colors="w", bboxes=PLAIN_LABEL_BOX
    ),
    "texts-round-box": lambda v: v.draw_texts(
        "dog", array([30, 40]), colors="k", bboxes=dict(boxstyle="round", facecolor="w")
    ),
    "texts-alignments": lambda v: v.draw_texts(
        ["centre", "right"],
        array([[80, 60], [150, 100]]),
        horizontal_alignments=["center", "right"],
        vertical_alignments=["center", "bottom"],
        font_sizes=14,
    ),
    "texts-monospace": lambda v: v.draw_texts(
        "mono 42", array([10, 50]), font_families="monospace", colors="c"
    ),
    "texts-math": lambda v: v.draw_texts("$x^2$", array([30, 40]), font_sizes=14),
    "texts-font-properties": lambda v: v.draw_texts(
        "serif", array([30, 40]), font_properties=FontProperties(family="serif", size=13)
    ),
    "texts-tensor-positions": lambda v: v.draw_texts(
        ["a", "b"], torch.tensor([[10.0, 10.0], [90.0, 90.0]]), colors="w"
    ),
    # What MMDetection draws, in an order that both libraries layer the same way (masks,
    # then boxes, then labels).
    "detection-result": lambda v: (
        v.draw_binary_masks(
            np.stack([box_mask(12, 12, 36, 46), box_mask(22, 72, 86, 76)]), colors=["r", "b"]
        )
        .draw_bboxes(BOXES, edge_colors=["r", "b"])
        .draw_texts(
            ["cat 0.91", "dog 0.55"],
            BOXES[:, :2],
            colors="w",
            font_sizes=8,
            bboxes=[dict(PLAIN_LABEL_BOX, facecolor="r"), dict(PLAIN_LABEL_BOX, facecolor="b")],
        )
    ),
}


@pytest.mark.parametrize("draw", DRAWINGS.values(), ids=DRAWINGS.keys())
def test_drawing_looks_the_same(draw):
    mm_image, tr_image = drawn_by_both(draw)
    assert_drawn_alike(mm_image, tr_image, BACKGROUND)


EMPTY = {
    "points": lambda v: v.draw_points(np.zeros((0, 2))),
    "lines": lambda v: v.draw_lines(np.zeros((0, 2)), np.zeros((0, 2))),
    "circles": lambda v: v.draw_circles(np.zeros((0, 2)), np.zeros(0)),
    "bboxes": lambda v: v.draw_bboxes(np.zeros((0, 4)), edge_colors=[]),
    "polygons": lambda v: v.draw_polygons([]),
    "masks": lambda v: v.draw_binary_masks(np.zeros((0, *BACKGROUND.shape[:2]), bool)),
    "texts": lambda v: v.draw_texts([], np.zeros((0, 2))),
}


@pytest.mark.parametrize("draw", EMPTY.values(), ids=EMPTY.keys())
def test_nothing_to_draw_leaves_the_image_as_it_was(draw):
    # A detector with no predictions: both draw nothing and raise nothing.
    for image in drawn_by_both(draw):
        assert np.array_equal(image, BACKGROUND)


@pytest.mark.parametrize("marker", ["x", "+"])
def test_unfilled_markers_have_mmengines_line_width(marker):
    def draw(v):
        v.draw_points(
            array([[20, 20], [60, 40], [100, 80]]), colors="w", marker=marker, sizes=np.full(3, 80)
        )

    # With the same stroke width the two are identical up to rounding (checked by setting
    # rcParams['patch.linewidth'] = 1.5, which treadle's collection then inherits).
    difference = assert_drawn_alike(*drawn_by_both(draw), BACKGROUND, mean_abs=0.1)
    assert difference.changed_tr == pytest.approx(difference.changed_mm, rel=0.02), str(difference)


def test_drawing_after_get_image_and_after_a_new_image():
    # get_image in the middle (treadle caches the rendering) and set_image of another size.
    def draw(v):
        v.draw_bboxes(BOXES[:1], edge_colors="r")
        v.get_image()
        v.draw_texts("more", array([80, 80]), colors="w")
        v.get_image()
        v.draw_binary_masks(box_mask(50, 70, 20, 20), colors="b")

    assert_drawn_alike(*drawn_by_both(draw), BACKGROUND)
    smaller = gradient_image(60, 90)

    def redraw(v):
        draw(v)
        v.set_image(smaller)
        v.draw_bboxes(array([[5, 5, 50, 40]]), edge_colors="y")

    assert_drawn_alike(*drawn_by_both(redraw), smaller)


def test_a_bgr_view_of_an_image_is_drawn_on_alike():
    # image[..., ::-1] (BGR to RGB, negative strides), as users write after cv2.imread.
    view = BACKGROUND[..., ::-1]
    assert_drawn_alike(*drawn_by_both(lambda v: v.draw_bboxes(BOXES), view), view.copy())


@pytest.mark.parametrize("name", LIBRARIES)
def test_untouched_image_comes_back_exactly(name):
    image = np.random.default_rng(0).integers(0, 256, (37, 53, 3), dtype=np.uint8)
    visualizer = new_visualizer(LIBRARIES[name], image)
    assert np.array_equal(visualizer.get_image(), image)
    assert (visualizer.width, visualizer.height) == (53, 37)


def test_set_image_drops_previous_drawings_in_both():
    for visual in LIBRARIES.values():
        visualizer = new_visualizer(visual, BACKGROUND)
        visualizer.draw_bboxes(BOXES, edge_colors="r").draw_texts("x", array([5, 5]))
        fresh = gradient_image(60, 80)
        visualizer.set_image(fresh)
        assert np.array_equal(visualizer.get_image(), fresh)


def test_draw_methods_chain_and_get_image_returns_a_new_array_in_both():
    for visual in LIBRARIES.values():
        visualizer = new_visualizer(visual, BACKGROUND)
        for method, args in [
            ("draw_points", (array([[5, 5]]),)),
            ("draw_lines", (array([[1, 9]]), array([[1, 9]]))),
            ("draw_circles", (array([[30, 30]]), array([5]))),
            ("draw_bboxes", (array([[1, 1, 9, 9]]),)),
            ("draw_polygons", (array([[1, 1], [9, 1], [5, 9]]),)),
            ("draw_binary_masks", (box_mask(1, 1, 5, 5),)),
            ("draw_texts", ("t", array([40, 40]))),
        ]:
            assert getattr(visualizer, method)(*args) is visualizer, (visual.__name__, method)
        first = visualizer.get_image()
        first[:] = 0
        assert first is not visualizer.get_image()
        assert visualizer.get_image().any()


def test_rgba_images_are_drawn_on_alike():
    rgba = np.dstack([BACKGROUND, np.full(BACKGROUND.shape[:2], 255, np.uint8)])
    mm_image, tr_image = drawn_by_both(lambda v: v.draw_bboxes(BOXES, edge_colors="r"), rgba)
    assert np.array_equal(new_visualizer(mm_visual, rgba).get_image(), BACKGROUND)
    assert np.array_equal(new_visualizer(tr_visual, rgba).get_image(), BACKGROUND)
    assert_drawn_alike(mm_image, tr_image, BACKGROUND)


def test_deviation_greyscale_images_stay_grey():
    # Deviation (treadle/visual/image_check.py: "(H, W) (grey, repeated to three channels)"):
    # MMEngine hands an (H, W) image to matplotlib's imshow, which colours it with the
    # 'viridis' colormap; treadle shows it grey, as every other image library does.
    grey = BACKGROUND[..., 0].copy()
    mm_image = new_visualizer(mm_visual, grey).get_image()
    tr_image = new_visualizer(tr_visual, grey).get_image()
    assert np.array_equal(tr_image, np.repeat(grey[..., None], 3, axis=2))
    assert not np.array_equal(mm_image[..., 0], mm_image[..., 1])  # coloured, not grey
