"""Input the two libraries answer differently on purpose (the rows of DEVIATIONS, and the
test_deviation_* tests): per-item lists of the wrong length, opacities and images out of
range, and the lenient inputs treadle accepts beyond MMEngine.

See tests/support/visual_parity.py for how the two libraries are compared. Skipped without
MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mmengine")

from visual_parity import (  # in tests/support, on pytest's sys.path
    BACKGROUND,
    FEATMAP,
    MASK,
    OVERLAY,
    P3,
    PLAIN_LABEL_BOX,
    THREE,
    TWO,
    array,
    assert_drawn_alike,
    box_mask,
    drawn,
    featmap_call,
    mm_visual,
    new_visualizer,
    on_image,
    outcome,
    tr_visual,
)

# Where the two libraries answer the same call differently on purpose. id: (call(visual),
# MMEngine's outcome, treadle's outcome), 'ok' or an exception type; the comment says why.
DEVIATIONS = {
    # Per-item lists must have exactly one entry per item (treadle/visual/draw_args.py
    # per_item, colors.py colors_per_item): MMEngine accepts longer lists for texts and masks
    # (extra entries ignored) and passes lists to matplotlib for shapes, which cycles a shorter
    # list and ignores a longer one. treadle refuses both, naming the argument.
    "per-item-texts-colours-too-many": (
        on_image(lambda v: v.draw_texts("a", array([1, 2]), colors=["r", "b"])),
        "ok",
        ValueError,
    ),
    "per-item-texts-sizes-too-many": (
        on_image(lambda v: v.draw_texts("a", array([1, 2]), font_sizes=[10, 12])),
        "ok",
        ValueError,
    ),
    "per-item-texts-bboxes-too-many": (
        on_image(
            lambda v: v.draw_texts("a", array([1, 2]), bboxes=[PLAIN_LABEL_BOX, PLAIN_LABEL_BOX])
        ),
        "ok",
        ValueError,
    ),
    "per-item-masks-colours-too-many": (
        on_image(lambda v: v.draw_binary_masks(MASK, colors=["r", "b"])),
        "ok",
        ValueError,
    ),
    "per-item-masks-alphas-too-many": (
        on_image(lambda v: v.draw_binary_masks(MASK, alphas=[0.5, 0.2])),
        "ok",
        ValueError,
    ),
    "per-item-masks-alphas-too-few": (
        on_image(lambda v: v.draw_binary_masks(np.stack([MASK, MASK]), alphas=[0.5])),
        "ok",  # MMEngine's zip() silently leaves the second mask undrawn
        ValueError,
    ),
    "per-item-bboxes-colours-cycled": (
        on_image(lambda v: v.draw_bboxes(THREE, edge_colors=["r", "b"])),
        "ok",
        ValueError,
    ),
    "per-item-bboxes-colours-too-many": (
        on_image(lambda v: v.draw_bboxes(TWO[:1], edge_colors=["r", "b"])),
        "ok",
        ValueError,
    ),
    "per-item-bboxes-widths-too-few": (
        on_image(lambda v: v.draw_bboxes(TWO, line_widths=[1])),
        "ok",
        ValueError,
    ),
    "per-item-bboxes-widths-too-many": (
        on_image(lambda v: v.draw_bboxes(TWO[:1], line_widths=[1, 2])),
        "ok",
        ValueError,
    ),
    "per-item-lines-colours-cycled": (
        on_image(lambda v: v.draw_lines(P3, P3, colors=["r", "b"])),
        "ok",
        ValueError,
    ),
    # Opacities are checked to lie in [0, 1] (draw_args.alpha_value, featmap.py): MMEngine's
    # cv2.addWeighted extrapolates with alpha 2 and returns a saturated picture.
    "masks-alpha-above-one": (
        on_image(lambda v: v.draw_binary_masks(MASK, alphas=2.0)),
        "ok",
        ValueError,
    ),
    "featmap-alpha-above-one": (
        featmap_call(featmap=FEATMAP, overlaid_image=OVERLAY, alpha=2),
        "ok",
        ValueError,
    ),
    # Images: treadle/visual/image_check.py refuses values outside [0, 255] (MMEngine wraps
    # 300 to 44) and bool images (MMEngine draws False/True as 0/1, black).
    "set_image-values-above-255": (
        lambda vis: new_visualizer(vis, np.full((4, 5, 3), 300)).get_image(),
        "ok",
        ValueError,
    ),
    "set_image-bool": (
        lambda vis: new_visualizer(vis, np.ones((4, 5, 3), bool)).get_image(),
        "ok",
        TypeError,
    ),
    # treadle accepts what MMEngine's type checks refuse, and draws it as the numpy array
    # (test_deviation_lenient_inputs_draw_like_their_numpy_form checks the pictures): nested
    # lists for coordinates (draw_args.as_array), a tuple of polygons, an int alpha for masks,
    # a numpy feature map.
    "lenient-bboxes-nested-list": (
        on_image(lambda v: v.draw_bboxes([[1, 2, 30, 40]])),
        TypeError,
        "ok",
    ),
    "lenient-points-nested-list": (on_image(lambda v: v.draw_points([[10, 20]])), TypeError, "ok"),
    "lenient-lines-nested-lists": (
        on_image(lambda v: v.draw_lines([[1, 90]], [[5, 50]])),
        TypeError,
        "ok",
    ),
    "lenient-circles-radius-list": (
        on_image(lambda v: v.draw_circles(array([[30, 30]]), [10])),
        TypeError,
        "ok",
    ),
    "lenient-circles-0d-radius": (
        on_image(lambda v: v.draw_circles(array([30, 30]), np.array(10.0))),
        IndexError,
        "ok",
    ),
    "lenient-texts-positions-list": (
        on_image(lambda v: v.draw_texts("a", [10, 20])),
        TypeError,
        "ok",
    ),
    "lenient-polygons-tuple": (
        on_image(lambda v: v.draw_polygons((array([[1, 2], [40, 5], [6, 60]]),))),
        TypeError,
        "ok",
    ),
    "lenient-polygons-nested-list": (
        on_image(lambda v: v.draw_polygons([[[1, 2], [40, 5], [6, 60]]])),
        AttributeError,
        "ok",
    ),
    "lenient-masks-int-alpha": (
        on_image(lambda v: v.draw_binary_masks(MASK, alphas=1)),
        TypeError,
        "ok",
    ),
    "lenient-featmap-numpy": (featmap_call(featmap=FEATMAP.numpy()), AssertionError, "ok"),
}


@pytest.mark.parametrize(
    ("call", "mm_expected", "tr_expected"), DEVIATIONS.values(), ids=DEVIATIONS.keys()
)
def test_deviation(call, mm_expected, tr_expected):
    mm, tr = outcome(lambda: call(mm_visual)), outcome(lambda: call(tr_visual))
    assert mm.kind == mm_expected, (mm.raised, mm.message)
    assert tr.kind == tr_expected, (tr.raised, tr.message)


def test_deviation_per_item_errors_name_the_argument_and_counts():
    # The message of each per-item refusal says which argument and how many entries.
    with pytest.raises(ValueError, match="edge_colors has 2 entries but there are 3 items"):
        on_image(lambda v: v.draw_bboxes(THREE, edge_colors=["r", "b"]))(tr_visual)
    with pytest.raises(ValueError, match="alphas has 1 entries but there are 2 items"):
        on_image(lambda v: v.draw_binary_masks(np.stack([MASK, MASK]), alphas=[0.5]))(tr_visual)


LENIENT = {
    "bboxes": (
        lambda v: v.draw_bboxes([[10, 20, 90, 100]]),
        lambda v: v.draw_bboxes(array([[10, 20, 90, 100]])),
    ),
    "points": (lambda v: v.draw_points([[10, 20]]), lambda v: v.draw_points(array([[10, 20]]))),
    "circles": (
        lambda v: v.draw_circles(array([[60, 60]]), [20]),
        lambda v: v.draw_circles(array([[60, 60]]), array([20])),
    ),
    "polygons": (
        lambda v: v.draw_polygons([[[1, 2], [140, 5], [60, 110]]]),
        lambda v: v.draw_polygons([array([[1, 2], [140, 5], [60, 110]])]),
    ),
    "masks": (
        lambda v: v.draw_binary_masks(box_mask(10, 10, 50, 50), alphas=1),
        lambda v: v.draw_binary_masks(box_mask(10, 10, 50, 50), alphas=1.0),
    ),
}


@pytest.mark.parametrize(("lenient", "strict"), LENIENT.values(), ids=LENIENT.keys())
def test_deviation_lenient_inputs_draw_like_their_numpy_form(lenient, strict):
    # What treadle accepts beyond MMEngine (see DEVIATIONS, 'lenient-*') draws what MMEngine
    # draws for the numpy form of the same input.
    assert_drawn_alike(drawn(mm_visual, strict), drawn(tr_visual, lenient), BACKGROUND)


def test_deviation_float_image_in_unit_range_warns():
    # Deviation (treadle/visual/image_check.py): a float image with values in [0, 1] is cast
    # to uint8 by both (so it draws black), but treadle also warns, saying to scale it.
    image = np.full((4, 5, 3), 0.5)
    mm = outcome(lambda: new_visualizer(mm_visual, image).get_image())
    tr = outcome(lambda: new_visualizer(tr_visual, image).get_image())
    assert np.array_equal(mm.result, tr.result) and not mm.result.any()
    assert mm.warned() == 0 and tr.warned() == 1
    with pytest.warns(UserWarning, match=r"values in \[0, 1\].*Multiply it by 255"):
        new_visualizer(tr_visual, image)


def test_float_images_in_0_255_are_truncated_alike():
    image = np.full((4, 5, 3), 200.7)
    assert np.array_equal(
        new_visualizer(mm_visual, image).get_image(), new_visualizer(tr_visual, image).get_image()
    )


def test_deviation_width_and_height_before_set_image():
    # Deviation: before set_image treadle's width and height are 0; MMEngine's visualizer has
    # no such attributes yet (AttributeError).
    assert outcome(lambda: new_visualizer(mm_visual).width).raised is AttributeError
    tr_visualizer = new_visualizer(tr_visual)
    assert (tr_visualizer.width, tr_visualizer.height) == (0, 0)
