"""Draw order and masks (documented deviations): which drawing ends up on top, in each
library.

See tests/support/visual_parity.py for how the two libraries are compared. Skipped without
MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mmengine")

from visual_parity import (  # in tests/support, on pytest's sys.path
    BACKGROUND,
    BOXES,
    array,
    assert_drawn_alike,
    box_mask,
    drawn,
    drawn_by_both,
    mm_visual,
    tr_visual,
)


def test_deviation_later_drawings_paint_over_earlier_ones():
    # Deviation (treadle/visual/canvas.py, module docstring): each drawing call gets the next
    # z-order, so later calls paint over earlier ones. MMEngine keeps matplotlib's per-artist
    # z-orders: texts (3) above lines (2) above boxes, circles, polygons and points (1), whatever
    # the call order. Here a label is drawn, then an opaque box over it.
    def label_then_box(v):
        v.draw_texts("HIDDEN", array([30, 40]), colors="w", font_sizes=14)
        v.draw_bboxes(array([[20, 30, 120, 80]]), face_colors="k", edge_colors="k", alpha=1.0)

    mm_image, tr_image = drawn_by_both(label_then_box)
    inside = (slice(34, 76), slice(24, 116))
    assert mm_image[inside].max() > 200  # MMEngine: the white text is still on top
    assert tr_image[inside].max() == 0  # treadle: the black box covers it

    # Drawn the other way round (box, then label), both show the label on the box.
    def box_then_label(v):
        v.draw_bboxes(array([[20, 30, 120, 80]]), face_colors="k", edge_colors="k", alpha=1.0)
        v.draw_texts("SHOWN", array([30, 40]), colors="w", font_sizes=14)

    # (A 14 pt white label on black: glyph spacing weighs more in the mean than usual.)
    assert_drawn_alike(*drawn_by_both(box_then_label), BACKGROUND, mean_abs=3)


def test_deviation_lines_no_longer_stay_above_later_boxes():
    # Same deviation for lines: MMEngine's LineCollection (z-order 2) stays above a box drawn
    # after it; in treadle the later box covers the line.
    def line_then_box(v):
        v.draw_lines(array([[10, 150]]), array([[60, 60]]), colors="w", line_widths=3)
        v.draw_bboxes(array([[40, 40, 120, 80]]), face_colors="k", edge_colors="k", alpha=1.0)

    mm_image, tr_image = drawn_by_both(line_then_box)
    assert mm_image[60, 80].min() > 200 and tr_image[60, 80].max() == 0


def test_masks_stay_under_drawings_in_both():
    # A mask drawn after a box and a label tints the image, not the box or the label.
    def box_label_then_mask(v):
        v.draw_bboxes(BOXES, edge_colors="w")
        v.draw_texts("label", array([12, 12]), colors="y")
        v.draw_binary_masks(box_mask(0, 0, 120, 160), colors="b", alphas=0.5)

    mm_image, tr_image = drawn_by_both(box_label_then_mask)
    background = drawn(tr_visual, lambda v: v.draw_binary_masks(box_mask(0, 0, 120, 160), "b", 0.5))
    assert_drawn_alike(mm_image, tr_image, background)
    for image in (mm_image, tr_image):
        assert image[10, 30].min() > 200  # the white top edge of the box, not tinted blue


def test_deviation_translucent_drawings_are_not_painted_twice_under_a_mask():
    # Deviation (treadle/visual/draw_masks.py): masks are blended into the image itself.
    # MMEngine blends into get_image() (which already shows the drawings) and keeps the
    # drawings on top, so a translucent face drawn before a mask is composited twice,
    # everywhere, even where no mask pixel is.
    def translucent_box(v):
        v.draw_bboxes(array([[10, 10, 60, 50]]), face_colors="r", alpha=0.3)

    def translucent_box_then_mask(v):
        translucent_box(v)
        v.draw_binary_masks(box_mask(100, 140, 10, 10), colors="b")  # far from the box

    inside = (slice(20, 40), slice(20, 50))
    for visual, twice in ((mm_visual, True), (tr_visual, False)):
        box_only = drawn(visual, translucent_box)
        with_mask = drawn(visual, translucent_box_then_mask)
        assert np.array_equal(box_only[inside], with_mask[inside]) is not twice, visual.__name__
