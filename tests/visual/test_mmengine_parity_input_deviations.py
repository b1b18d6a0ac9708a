"""Input the two libraries answer differently on purpose (the rows of DEVIATIONS, and the
test_deviation_* tests), chiefly the lenient inputs treadle accepts beyond MMEngine; and the
suspicious input MMEngine accepts, which treadle takes the same way with a warning (FOLLOWED).

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
    FEATMAP,
    MASK,
    OVERLAY,
    PLAIN_LABEL_BOX,
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

from treadle.visual.strict_checks import StrictChecks, SuspiciousInputWarning

# Where the two libraries answer the same call differently on purpose. id: (call(visual),
# MMEngine's outcome, treadle's outcome), 'ok' or an exception type; the comment says why.
DEVIATIONS = {
    # Too few entries for texts and masks: both refuse (MMEngine's AssertionError; treadle's
    # VisualValueError is one too, with MMEngine's words).
    "per-item-texts-colours-too-few": (
        on_image(lambda v: v.draw_texts(["a", "b"], array([[1, 2], [5, 6]]), colors=["r"])),
        AssertionError,
        AssertionError,
    ),
    "per-item-masks-colours-too-few": (
        on_image(lambda v: v.draw_binary_masks(np.stack([MASK, MASK]), colors=["r"])),
        AssertionError,
        AssertionError,
    ),
    # Opacities of shapes outside [0, 1]: matplotlib refuses them under MMEngine, and treadle.
    "bboxes-alpha-above-one": (
        on_image(lambda v: v.draw_bboxes(TWO, alpha=2)),
        ValueError,
        ValueError,
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
    if tr_expected == "ok":
        assert tr.kind == "ok", (tr.raised, tr.message)
    else:
        assert tr.raised is not None and issubclass(tr.raised, tr_expected), (tr.raised, tr.message)


# Suspicious input MMEngine accepts, which treadle now accepts and draws the same way, with a
# SuspiciousInputWarning (issue 41; treadle/visual/item_lists.py, draw_args.blend_weight,
# image_check._wrapped): lists longer than the items (the extra entries ignored), shorter ones
# for shapes (repeated in turn, as matplotlib's collections do), too few mask alphas (the other
# masks undrawn, as MMEngine's zip() leaves them), blend opacities outside [0, 1]
# (extrapolated and clipped, as cv2.addWeighted does), and images outside 0-255 or of bools
# (wrapped around by astype('uint8')).
FOLLOWED = {
    "per-item-texts-colours-too-many": on_image(
        lambda v: v.draw_texts("a", array([1, 2]), colors=["r", "b"])
    ),
    "per-item-texts-sizes-too-many": on_image(
        lambda v: v.draw_texts("a", array([1, 2]), font_sizes=[10, 12])
    ),
    "per-item-texts-bboxes-too-many": on_image(
        lambda v: v.draw_texts("a", array([1, 2]), bboxes=[PLAIN_LABEL_BOX, PLAIN_LABEL_BOX])
    ),
    "per-item-masks-colours-too-many": on_image(
        lambda v: v.draw_binary_masks(MASK, colors=["r", "b"])
    ),
    "per-item-masks-alphas-too-many": on_image(
        lambda v: v.draw_binary_masks(MASK, alphas=[0.5, 0.2])
    ),
    "per-item-masks-alphas-too-few": on_image(
        lambda v: v.draw_binary_masks(np.stack([MASK, box_mask(50, 50, 20, 20)]), alphas=[0.5])
    ),
    "per-item-bboxes-colours-cycled": on_image(
        lambda v: v.draw_bboxes(BOXES[[0, 1, 0]] + [[0, 0, 5, 5]], edge_colors=["r", "b"])
    ),
    "per-item-bboxes-colours-too-many": on_image(
        lambda v: v.draw_bboxes(BOXES[:1], edge_colors=["r", "b"])
    ),
    "per-item-bboxes-widths-too-few": on_image(lambda v: v.draw_bboxes(BOXES, line_widths=[1])),
    "per-item-bboxes-widths-too-many": on_image(
        lambda v: v.draw_bboxes(BOXES[:1], line_widths=[1, 2])
    ),
    "per-item-lines-colours-cycled": on_image(
        lambda v: v.draw_lines(
            array([[10, 150], [10, 150], [10, 150]]),
            array([[20, 20], [60, 60], [100, 100]]),
            colors=["r", "b"],
        )
    ),
    "masks-alpha-above-one": on_image(lambda v: v.draw_binary_masks(MASK, alphas=2.0)),
    "masks-alpha-below-zero": on_image(lambda v: v.draw_binary_masks(MASK, alphas=-0.5)),
    "featmap-alpha-above-one": featmap_call(featmap=FEATMAP, overlaid_image=OVERLAY, alpha=2),
    "set_image-values-above-255": lambda vis: new_visualizer(
        vis, np.full((4, 5, 3), 300)
    ).get_image(),
    "set_image-negative-floats": lambda vis: new_visualizer(
        vis, np.full((4, 5, 3), -5.5)
    ).get_image(),
    "set_image-bool": lambda vis: new_visualizer(vis, np.ones((4, 5, 3), bool)).get_image(),
}


@pytest.mark.parametrize("call", FOLLOWED.values(), ids=FOLLOWED.keys())
def test_suspicious_input_is_taken_as_mmengine_takes_it_with_a_warning(request, call):
    mm, tr = outcome(lambda: call(mm_visual)), outcome(lambda: call(tr_visual))
    assert mm.kind == "ok", (mm.raised, mm.message)
    assert tr.kind == "ok", (tr.raised, tr.message)
    assert tr.warned(SuspiciousInputWarning) >= 1 and mm.warned(SuspiciousInputWarning) == 0
    assert mm.result.shape == tr.result.shape
    difference = np.abs(mm.result.astype(int) - tr.result.astype(int))
    # Anti-aliased edges differ slightly; the colours of OpenCV's and matplotlib's JET too
    # (test_mmengine_parity_featmap.py allows 6 on average; alpha=2 doubles them).
    assert difference.mean() <= (12 if "featmap" in request.node.callspec.id else 1.5)


@pytest.mark.parametrize("call", FOLLOWED.values(), ids=FOLLOWED.keys())
def test_strict_checks_refuse_what_mmengine_takes(monkeypatch, call):
    monkeypatch.setattr(StrictChecks, "enabled", True)
    refused = outcome(lambda: call(tr_visual)).raised
    assert refused is not None and issubclass(refused, (ValueError, TypeError))


def image_of(visual, image):
    """What a Visualizer of ``visual`` shows of ``image``."""
    return new_visualizer(visual, image).get_image()


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
