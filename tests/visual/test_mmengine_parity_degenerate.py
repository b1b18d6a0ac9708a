"""Degenerate predictions: where MMEngine stops the run (an AssertionError inside a visualization
hook), treadle warns and draws; where MMEngine draws, treadle draws the same image.

Skipped without MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mmengine")

from visual_parity import (  # in tests/support, on pytest's sys.path
    BACKGROUND,
    assert_drawn_alike,
    drawn,
    mm_visual,
    on_image,
    outcome,
    tr_visual,
)


def test_deviation_flipped_box_mmengine_asserts_treadle_warns_and_draws() -> None:
    flipped = on_image(lambda v: v.draw_bboxes(np.array([[60, 40, 10, 5]]), edge_colors="r"))
    mm, tr = outcome(lambda: flipped(mm_visual)), outcome(lambda: flipped(tr_visual))
    assert mm.raised is AssertionError
    assert tr.raised is None
    assert tr.warned() == 1 and "x1 > x2 or y1 > y2" in tr.warnings[0][1]
    # What treadle draws is what MMEngine draws for the same box with its corners in order.
    upright = drawn(
        mm_visual, lambda v: v.draw_bboxes(np.array([[10, 5, 60, 40]]), edge_colors="r")
    )
    assert_drawn_alike(tr.result, upright, BACKGROUND)


def test_deviation_empty_1d_masks_and_boxes_mmengine_asserts_treadle_draws_nothing() -> None:
    for draw in (
        lambda v: v.draw_binary_masks(np.zeros((0,), bool)),
        lambda v: v.draw_bboxes(np.zeros((0,))),
    ):
        mm = outcome(lambda draw=draw: on_image(draw)(mm_visual))
        tr = outcome(lambda draw=draw: on_image(draw)(tr_visual))
        assert mm.raised is AssertionError
        assert tr.raised is None and tr.warnings == ()
        np.testing.assert_array_equal(tr.result, BACKGROUND)


@pytest.mark.parametrize(
    "draw",
    [
        lambda v: v.draw_binary_masks(np.zeros((0, *BACKGROUND.shape[:2]), bool)),
        lambda v: v.draw_bboxes(np.zeros((0, 4))),
        lambda v: v.draw_points(np.zeros((0, 2))),
    ],
    ids=["masks-0xHxW", "boxes-0x4", "points-0x2"],
)
def test_both_draw_nothing_for_no_predictions(draw) -> None:
    mm = outcome(lambda: on_image(draw)(mm_visual))
    tr = outcome(lambda: on_image(draw)(tr_visual))
    assert mm.raised is None and tr.raised is None
    np.testing.assert_array_equal(tr.result, mm.result)
