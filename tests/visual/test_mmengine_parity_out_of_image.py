"""Coordinates outside the image: both libraries warn and draw, with treadle's deviations.

See tests/support/visual_parity.py for how the two libraries are compared. Skipped without
MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("mmengine")

from visual_parity import (  # in tests/support, on pytest's sys.path
    BACKGROUND,
    LIBRARIES,
    array,
    new_visualizer,
    outcome,
    tr_visual,
)

OUT_OF_IMAGE = {
    "bboxes": lambda v: v.draw_bboxes(array([[-5, 0, 20, 20]])),
    "texts": lambda v: v.draw_texts("a", array([170, 10])),
    "lines": lambda v: v.draw_lines(array([[0, 170]]), array([[0, 10]])),
    "circles": lambda v: v.draw_circles(array([[5, 5]]), array([10])),
    "polygons": lambda v: v.draw_polygons(array([[0, 0], [170, 0], [0, 20]])),
}


@pytest.mark.parametrize("draw", OUT_OF_IMAGE.values(), ids=OUT_OF_IMAGE.keys())
def test_out_of_image_warns_in_both(draw):
    results = {}
    for name, visual in LIBRARIES.items():
        visualizer = new_visualizer(visual, BACKGROUND)
        results[name] = outcome(lambda: draw(visualizer).get_image())  # noqa: B023
        assert results[name].raised is None and results[name].warned() >= 1, name
    assert results["treadle"].warned() == 1  # MMEngine warns twice for boxes (box and polygon)
    with pytest.warns(UserWarning, match="outside the image"):
        draw(new_visualizer(tr_visual, BACKGROUND))


def test_deviation_out_of_image_points_warn():
    # Deviation: treadle warns for points outside the image as for every other shape (the
    # issue: "coordinates out of the image (warn, don't crash)"); MMEngine's draw_points
    # does not check.
    results = [
        outcome(lambda vis=vis: new_visualizer(vis, BACKGROUND).draw_points(array([[170, 10]])))
        for vis in LIBRARIES.values()
    ]
    assert [r.warned() for r in results] == [0, 1]


def test_deviation_a_box_on_the_image_border_is_inside():
    # Deviation (treadle/visual/draw_args.py warn_outside): coordinates are continuous, so
    # x == width (the right edge of the last column) is inside: a box around the whole image
    # gives no warning. MMEngine requires x < width and warns (twice).
    whole = array([[0, 0, 160, 120]])
    results = [
        outcome(lambda vis=vis: new_visualizer(vis, BACKGROUND).draw_bboxes(whole))
        for vis in LIBRARIES.values()
    ]
    assert [r.warned() for r in results] == [2, 0]
