"""Bad input that both libraries refuse: each row of BOTH_REFUSE records the exception type
of each library and part of treadle's message. MMEngine mostly validates with ``assert``
(AssertionError, and no check at all under ``python -O``); treadle raises
ValueError/TypeError naming the argument, as the issue asks, as a class that is also an
AssertionError where MMEngine asserts (treadle/visual/errors.py).

See tests/support/visual_parity.py for how the two libraries are compared. Skipped without
MMEngine: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("mmengine")

import torch
from visual_parity import (  # in tests/support, on pytest's sys.path
    BACKGROUND,
    FEATMAP,
    LIBRARIES,
    MASK,
    P3,
    TWO,
    array,
    featmap_call,
    mm_visual,
    new_visualizer,
    on_image,
    outcome,
    tr_visual,
)

# id: (call(visual), MMEngine's exception type, treadle's exception type, part of treadle's message)
BOTH_REFUSE = {
    # set_image / get_image
    "set_image-None": (
        lambda vis: new_visualizer(vis).set_image(None),
        AssertionError,
        TypeError,
        "got NoneType",
    ),
    "set_image-channel-first": (
        lambda vis: new_visualizer(vis, np.zeros((3, 40, 50), np.uint8)).get_image(),
        TypeError,
        ValueError,
        "channel-first",
    ),
    "set_image-tensor": (
        lambda vis: new_visualizer(vis, torch.zeros(4, 5, 3, dtype=torch.uint8)),
        AttributeError,
        TypeError,
        r"\.cpu\(\)\.numpy\(\)",
    ),
    "set_image-list": (
        lambda vis: new_visualizer(vis, [[0]]),
        AttributeError,
        TypeError,
        "got list",
    ),
    "set_image-empty": (
        lambda vis: new_visualizer(vis, np.zeros((0, 5, 3), np.uint8)).get_image(),
        ValueError,
        ValueError,
        "empty",
    ),
    "get_image-before-set_image": (
        lambda vis: new_visualizer(vis).get_image(),
        AttributeError,
        RuntimeError,
        "set_image",
    ),
    "draw-before-set_image": (
        lambda vis: new_visualizer(vis).draw_bboxes(TWO),
        AttributeError,
        RuntimeError,
        "set_image",
    ),
    # shapes
    "bboxes-three-columns": (
        on_image(lambda v: v.draw_bboxes(array([[1, 2, 3]]))),
        AssertionError,
        ValueError,
        r"\(N, 4\)",
    ),
    # x1 > x2: MMEngine asserts, treadle warns (test_mmengine_parity_degenerate.py).
    "bboxes-str": (on_image(lambda v: v.draw_bboxes("box")), TypeError, TypeError, "got str"),
    "points-three-columns": (
        on_image(lambda v: v.draw_points(array([[1, 2, 3]]))),
        AssertionError,
        ValueError,
        r"\(N, 2\)",
    ),
    "lines-shapes-differ": (
        on_image(lambda v: v.draw_lines(array([[1, 2]]), TWO[:, :2])),
        AssertionError,
        ValueError,
        "same shape",
    ),
    "lines-three-columns": (
        on_image(lambda v: v.draw_lines(P3.T, P3.T)),
        AssertionError,
        ValueError,
        r"\(N, 2\)",
    ),
    "circles-radius-count": (
        on_image(lambda v: v.draw_circles(TWO[:, :2], array([3]))),
        AssertionError,
        ValueError,
        "one value per centre",
    ),
    "polygons-three-columns": (
        on_image(lambda v: v.draw_polygons(array([[1, 2, 3], [4, 5, 6]]))),
        AssertionError,
        ValueError,
        r"\(M, 2\)",
    ),
    "polygons-str": (on_image(lambda v: v.draw_polygons("poly")), TypeError, TypeError, "got str"),
    "masks-uint8": (
        on_image(lambda v: v.draw_binary_masks(MASK.astype(np.uint8))),
        AssertionError,
        TypeError,
        "dtype bool",
    ),
    "masks-wrong-size": (
        on_image(lambda v: v.draw_binary_masks(np.zeros((10, 10), bool))),
        AssertionError,
        ValueError,
        "match the image",
    ),
    "masks-list": (
        on_image(lambda v: v.draw_binary_masks([MASK])),
        TypeError,
        TypeError,
        "got list",
    ),
    "texts-int": (
        on_image(lambda v: v.draw_texts(5, array([1, 2]))),
        TypeError,
        TypeError,
        "str or a list of str",
    ),
    "texts-positions-count": (
        on_image(lambda v: v.draw_texts(["a", "b"], array([[1, 2]]))),
        AssertionError,
        ValueError,
        "one row per text",
    ),
    # colours
    "colour-tuple-out-of-range": (
        on_image(lambda v: v.draw_bboxes(TWO, edge_colors=(300, 0, 0))),
        AssertionError,
        ValueError,
        "0-255",
    ),
    "colour-tuple-of-two": (
        on_image(lambda v: v.draw_bboxes(TWO, edge_colors=(3, 0))),
        AssertionError,
        ValueError,
        "three numbers",
    ),
    "colour-unknown-name": (
        on_image(lambda v: v.draw_bboxes(TWO, edge_colors="notacolour")),
        ValueError,
        ValueError,
        "unknown colour",
    ),
    "colour-int": (
        on_image(lambda v: v.draw_bboxes(TWO, edge_colors=5)),
        TypeError,
        TypeError,
        "colour name",
    ),
    "mask-colour-out-of-range": (
        on_image(lambda v: v.draw_binary_masks(MASK, colors=(300, 0, 0))),
        AssertionError,
        ValueError,
        "0-255",
    ),
    "mask-colour-unknown-name": (
        on_image(lambda v: v.draw_binary_masks(MASK, colors="notacolour")),
        ValueError,
        ValueError,
        "unknown colour",
    ),
    "text-colour-unknown-name": (
        on_image(lambda v: v.draw_texts("a", array([1, 2]), colors="notacolour")),
        ValueError,
        ValueError,
        "unknown colour",
    ),
    # other arguments
    "bboxes-alpha-above-one": (
        on_image(lambda v: v.draw_bboxes(TWO, alpha=2)),
        ValueError,
        ValueError,
        r"\[0, 1\]",
    ),
    "bboxes-alpha-negative": (
        on_image(lambda v: v.draw_bboxes(TWO, alpha=-0.5)),
        ValueError,
        ValueError,
        r"\[0, 1\]",
    ),
    "bboxes-unknown-line-style": (
        on_image(lambda v: v.draw_bboxes(TWO, line_styles="zz")),
        ValueError,
        ValueError,
        "zz",
    ),
    "texts-font-size-str": (
        on_image(lambda v: v.draw_texts("a", array([1, 2]), font_sizes="10")),
        TypeError,
        TypeError,
        "must be a number",
    ),
    "texts-vertical-alignment": (
        on_image(lambda v: v.draw_texts("a", array([1, 2]), vertical_alignments="middle")),
        ValueError,
        ValueError,
        "middle",
    ),
    "texts-horizontal-alignment": (
        on_image(lambda v: v.draw_texts("a", array([1, 2]), horizontal_alignments="middle")),
        ValueError,
        ValueError,
        "middle",
    ),
    "texts-bboxes-str": (
        on_image(lambda v: v.draw_texts("a", array([1, 2]), bboxes="box")),
        TypeError,
        TypeError,
        "must be a dict",
    ),
    # per-item lists shorter than the items: refused by both (longer ones: see DEVIATIONS)
    "texts-colours-too-few": (
        on_image(lambda v: v.draw_texts(["a", "b", "c"], P3, colors=["r", "b"])),
        AssertionError,
        ValueError,
        "2 entries but there are 3",
    ),
    "masks-colours-too-few": (
        on_image(lambda v: v.draw_binary_masks(np.stack([MASK] * 3), colors=["r", "b"])),
        AssertionError,
        ValueError,
        "2 entries but there are 3",
    ),
    "points-colours-too-few": (
        on_image(lambda v: v.draw_points(P3, colors=["r", "b"])),
        ValueError,
        ValueError,
        "2 entries but there are 3",
    ),
    "points-colours-too-many": (
        on_image(lambda v: v.draw_points(P3[:1], colors=["r", "b"])),
        ValueError,
        ValueError,
        "2 entries but there are 1",
    ),
    # draw_featmap
    "featmap-2d": (
        featmap_call(featmap=torch.zeros(4, 4)),
        AssertionError,
        ValueError,
        r"\(C, H, W\)",
    ),
    "featmap-unknown-reduction": (
        featmap_call(featmap=FEATMAP, channel_reduction="max"),
        AssertionError,
        ValueError,
        "squeeze_mean",
    ),
    "featmap-topk0-five-channels": (
        featmap_call(featmap=FEATMAP[:5], channel_reduction=None, topk=0),
        AssertionError,
        ValueError,
        "must be 1 or 3 when topk is less than 1",
    ),
    "featmap-arrangement-too-small": (
        featmap_call(featmap=FEATMAP, channel_reduction=None, topk=5, arrangement=(2, 2)),
        AssertionError,
        ValueError,
        "fewer than topk",
    ),
    # show
    "show-unknown-backend": (
        lambda vis: new_visualizer(vis, BACKGROUND).show(backend="qt"),
        ValueError,
        ValueError,
        "'matplotlib' or 'cv2'",
    ),
    # Visualizer construction
    "vis_backends-str": (
        lambda vis: new_visualizer(vis, vis_backends="LocalVisBackend"),
        TypeError,
        TypeError,
        "vis_backends must be",
    ),
    "vis_backends-list-of-str": (
        lambda vis: new_visualizer(vis, vis_backends=["LocalVisBackend"]),
        TypeError,
        TypeError,
        "vis_backends must be",
    ),
    "vis_backends-unknown-type": (
        lambda vis: new_visualizer(vis, vis_backends=[dict(type="NoSuchBackend")]),
        KeyError,
        KeyError,
        "NoSuchBackend",
    ),
}


@pytest.mark.parametrize(
    ("call", "mm_raises", "tr_raises", "tr_message"),
    BOTH_REFUSE.values(),
    ids=BOTH_REFUSE.keys(),
)
def test_both_refuse(call, mm_raises, tr_raises, tr_message):
    mm, tr = outcome(lambda: call(mm_visual)), outcome(lambda: call(tr_visual))
    assert mm.raised is mm_raises, (mm.raised, mm.message)
    assert tr.raised is not None and issubclass(tr.raised, tr_raises), (tr.raised, tr.message)
    if mm_raises is AssertionError:
        # Where MMEngine asserts, treadle's error is also an AssertionError (issue 41), so the
        # ``except AssertionError`` of code written for MMEngine still catches it.
        assert issubclass(tr.raised, AssertionError), (tr.raised, tr.message)
    with pytest.raises(tr_raises, match=tr_message):
        call(tr_visual)


def test_both_refuse_duplicate_backend_names(tmp_path):
    backends = [dict(type="LocalVisBackend"), dict(type="LocalVisBackend")]
    for visual in LIBRARIES.values():
        with pytest.raises(RuntimeError, match="LocalVisBackend"):
            new_visualizer(visual, vis_backends=[dict(b) for b in backends], save_dir=str(tmp_path))
