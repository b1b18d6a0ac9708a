"""What an untrained model predicts is drawn, with a warning, instead of stopping the run.

Flipped boxes (x1 > x2), NaN coordinates, empty predictions and shapes outside the image warn or
draw nothing; what cannot be drawn at all (a mask of another size, a wrong number of columns)
still raises.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from treadle.visual.visualizer import Visualizer

RED = (255, 0, 0)


def black(height: int = 60, width: int = 80) -> Visualizer:
    return Visualizer(image=np.zeros((height, width, 3), dtype=np.uint8))


def drawn_quietly(draw) -> np.ndarray:
    vis = black()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the call
        draw(vis)
    return vis.get_image()


def test_flipped_box_warns_and_is_drawn_as_the_rectangle_it_spans() -> None:
    vis = black()
    with pytest.warns(UserWarning) as record:
        vis.draw_bboxes(np.array([[50, 40, 10, 5]]), edge_colors="r", alpha=1.0)
    (warning,) = record
    assert str(warning.message) == (
        "1 of 1 bboxes have x1 > x2 or y1 > y2 (bboxes are x1, y1, x2, y2); the first is "
        "bboxes[0] = [50.0, 40.0, 10.0, 5.0]. They are drawn as the rectangle between the two "
        "corners."
    )
    assert warning.filename == __file__  # points at the caller's draw_bboxes line
    upright = drawn_quietly(
        lambda v: v.draw_bboxes(np.array([[10, 5, 50, 40]]), edge_colors="r", alpha=1.0)
    )
    np.testing.assert_array_equal(vis.get_image(), upright)


def test_flipped_tensor_boxes_count_every_flipped_one() -> None:
    boxes = torch.tensor([[1.0, 1, 5, 5], [9, 1, 3, 5], [1, 9, 5, 3]])
    with pytest.warns(UserWarning, match=r"^2 of 3 bboxes have x1 > x2 .* bboxes\[1\] = \[9.0"):
        black().draw_bboxes(boxes)


def test_non_finite_coordinates_warn_and_are_left_out() -> None:
    vis = black()
    with pytest.warns(UserWarning) as record:
        vis.draw_bboxes(np.array([[np.nan, 1, 5, 5], [1, 1, 5, np.inf]]), edge_colors="r")
    messages = [str(w.message) for w in record]
    assert messages == [
        "2 of 2 bboxes have NaN or infinite coordinates and are not drawn; the first is "
        "bboxes[0] with points [[nan, 1.0], [5.0, 1.0], [5.0, 5.0], [nan, 5.0]]"
    ]
    assert record[0].filename == __file__
    with pytest.warns(UserWarning, match=r"^1 of 2 points have NaN or infinite coordinates"):
        vis.draw_points(np.array([[1, 1], [np.nan, 2]]))
    with pytest.warns(UserWarning, match=r"^1 of 1 polygons\[0\] have NaN or infinite"):
        vis.draw_polygons(np.array([[1, 1], [5, np.nan], [3, 3]]))
    with pytest.warns(UserWarning, match=r"^1 of 1 texts have NaN or infinite"):
        vis.draw_texts("a", np.array([np.nan, 3]))


@pytest.mark.parametrize(
    "draw",
    [
        lambda v: v.draw_bboxes(np.zeros((0, 4))),
        lambda v: v.draw_bboxes(np.zeros((0,))),
        lambda v: v.draw_bboxes(torch.zeros(0)),
        lambda v: v.draw_points(np.zeros((0,))),
        lambda v: v.draw_lines(np.zeros(0), np.zeros(0)),
        lambda v: v.draw_circles(np.zeros((0, 2)), np.zeros(0)),
        lambda v: v.draw_polygons([]),
        lambda v: v.draw_binary_masks(np.zeros((0, 60, 80), bool)),
        lambda v: v.draw_binary_masks(np.zeros((0,), bool)),
        lambda v: v.draw_binary_masks(np.zeros((0, 7, 9), bool)),  # empty, other size
        lambda v: v.draw_binary_masks(torch.zeros((0, 60, 80), dtype=torch.bool)),
        lambda v: v.draw_binary_masks(np.zeros((60, 80), bool)),  # all False
    ],
    ids=[
        "boxes-0x4",
        "boxes-0",
        "boxes-tensor-0",
        "points-0",
        "lines-0",
        "circles-0",
        "polygons-none",
        "masks-0xHxW",
        "masks-0",
        "masks-0-other-size",
        "masks-tensor-0",
        "mask-all-false",
    ],
)
def test_empty_predictions_draw_nothing_without_warning(draw) -> None:
    image = drawn_quietly(draw)
    assert not image.any()


def test_points_outside_the_image_warn_and_the_inside_ones_are_drawn() -> None:
    vis = black()
    with pytest.warns(UserWarning, match=r"^1 of 2 points lie partly outside the image"):
        vis.draw_points(np.array([[20, 20], [500, -3]]), colors="r")
    assert tuple(vis.get_image()[20, 20]) == RED


def test_what_cannot_be_drawn_still_raises() -> None:
    vis = black()
    with pytest.raises(
        ValueError, match=r"binary_masks must have shape \(N, 60, 80\) or \(60, 80\)"
    ):
        vis.draw_binary_masks(np.zeros((1, 7, 9), bool))
    with pytest.raises(TypeError, match="binary_masks must have dtype bool, got uint8"):
        vis.draw_binary_masks(np.zeros((1, 60, 80), np.uint8))
    with pytest.raises(ValueError, match=r"bboxes must have shape \(N, 4\) .* got shape \(2, 3\)"):
        vis.draw_bboxes(np.zeros((2, 3)))
    with pytest.raises(TypeError, match="bboxes must hold numbers, got dtype <U1"):
        vis.draw_bboxes(np.array(["a", "b", "c", "d"]))
