"""Issue 41: suspicious input that MMEngine 0.10.7 accepts is accepted and treated as MMEngine
treats it, with a SuspiciousInputWarning; StrictChecks (or TREADLE_VISUAL_STRICT=1) refuses it.

What MMEngine does with each was observed on MMEngine 0.10.7 (the parity tests in the mmengine
environment compare the two libraries: test_mmengine_parity_input_deviations.py).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

from treadle.visual import LocalVisBackend, TensorboardVisBackend, Visualizer
from treadle.visual.strict_checks import STRICT_ENV, StrictChecks, SuspiciousInputWarning

IMAGE = np.full((60, 80, 3), 40, dtype=np.uint8)
TWO_BOXES = np.array([[5, 5, 30, 30], [40, 10, 70, 50]])
THREE_BOXES = np.array([[5, 5, 20, 20], [30, 5, 45, 20], [55, 5, 70, 20]])


def drawn(draw) -> np.ndarray:
    """The picture ``draw(visualizer)`` makes on IMAGE, warnings silenced."""
    vis = Visualizer(image=IMAGE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SuspiciousInputWarning)
        draw(vis)
    return vis.get_image()


# (call with a list of another length, the same drawing with the list MMEngine ends up using,
# the warning's words)
FITTED_LISTS = {
    "bboxes-colours-too-many": (
        lambda v: v.draw_bboxes(TWO_BOXES[:1], edge_colors=["r", "b"]),
        lambda v: v.draw_bboxes(TWO_BOXES[:1], edge_colors=["r"]),
        r"edge_colors has 2 entries for 1 items to draw: the last 1 are ignored",
    ),
    "bboxes-colours-cycled": (
        lambda v: v.draw_bboxes(THREE_BOXES, edge_colors=["r", "b"], alpha=1),
        lambda v: v.draw_bboxes(THREE_BOXES, edge_colors=["r", "b", "r"], alpha=1),
        r"edge_colors has 2 entries for 3 items to draw: they are repeated in turn",
    ),
    "bboxes-widths-cycled": (
        lambda v: v.draw_bboxes(THREE_BOXES, line_widths=[1, 4]),
        lambda v: v.draw_bboxes(THREE_BOXES, line_widths=[1, 4, 1]),
        r"line_widths has 2 entries for 3 items",
    ),
    "bboxes-faces-too-many": (
        lambda v: v.draw_bboxes(TWO_BOXES, face_colors=["r", "b", "g"]),
        lambda v: v.draw_bboxes(TWO_BOXES, face_colors=["r", "b"]),
        r"face_colors has 3 entries for 2 items",
    ),
    "polygons-styles-cycled": (
        lambda v: v.draw_polygons(
            [b.reshape(2, 2)[[0, 1, 1]] for b in THREE_BOXES], line_styles=["--"]
        ),
        lambda v: v.draw_polygons(
            [b.reshape(2, 2)[[0, 1, 1]] for b in THREE_BOXES], line_styles=["--"] * 3
        ),
        r"line_styles has 1 entries for 3 items",
    ),
    "circles-colours-cycled": (
        lambda v: v.draw_circles(
            np.array([[10, 10], [30, 30], [50, 30]]), np.array([5, 5, 5]), edge_colors=["r", "b"]
        ),
        lambda v: v.draw_circles(
            np.array([[10, 10], [30, 30], [50, 30]]),
            np.array([5, 5, 5]),
            edge_colors=["r", "b", "r"],
        ),
        r"edge_colors has 2 entries for 3 items",
    ),
    "lines-colours-and-widths": (
        lambda v: v.draw_lines(
            np.array([[1, 70], [1, 70], [1, 70]]),
            np.array([[5, 5], [25, 25], [45, 45]]),
            colors=["r", "b"],
            line_widths=[1, 2, 3, 4],
        ),
        lambda v: v.draw_lines(
            np.array([[1, 70], [1, 70], [1, 70]]),
            np.array([[5, 5], [25, 25], [45, 45]]),
            colors=["r", "b", "r"],
            line_widths=[1, 2, 3],
        ),
        r"colors has 2 entries for 3 items",
    ),
    "texts-every-list-too-long": (
        lambda v: v.draw_texts(
            "ab",
            np.array([5, 5]),
            colors=["r", "b"],
            font_sizes=[12, 20],
            vertical_alignments=["top", "bottom"],
            horizontal_alignments=["left", "right"],
            font_families=["monospace", "serif"],
            bboxes=[dict(facecolor="white"), dict(facecolor="black")],
        ),
        lambda v: v.draw_texts(
            "ab",
            np.array([5, 5]),
            colors="r",
            font_sizes=12,
            vertical_alignments="top",
            horizontal_alignments="left",
            font_families="monospace",
            bboxes=dict(facecolor="white"),
        ),
        r"colors has 2 entries for 1 items to draw: the last 1 are ignored",
    ),
    "masks-colours-and-alphas-too-many": (
        lambda v: v.draw_binary_masks(IMAGE[..., 0] > 0, colors=["r", "b"], alphas=[0.5, 0.1]),
        lambda v: v.draw_binary_masks(IMAGE[..., 0] > 0, colors="r", alphas=0.5),
        r"has 2 entries for 1 items",
    ),
}


@pytest.mark.parametrize(("call", "same_as", "words"), FITTED_LISTS.values(), ids=FITTED_LISTS)
def test_lists_of_another_length_are_fitted_as_mmengine_fits_them(call, same_as, words):
    vis = Visualizer(image=IMAGE)
    with pytest.warns(SuspiciousInputWarning) as record:
        call(vis)
    assert any(re.search(words, str(warning.message)) for warning in record)
    assert {warning.filename for warning in record} == {__file__}  # at the drawing call
    np.testing.assert_array_equal(vis.get_image(), drawn(same_as))


@pytest.mark.parametrize(("call", "same_as", "words"), FITTED_LISTS.values(), ids=FITTED_LISTS)
def test_strict_checks_refuse_lists_of_another_length(strict, call, same_as, words):
    with pytest.raises(ValueError, match=r"entries but there are \d items to draw") as error:
        call(Visualizer(image=IMAGE))
    assert isinstance(error.value, AssertionError)


def test_too_short_lists_of_texts_and_masks_are_refused_with_mmengines_words():
    vis = Visualizer(image=IMAGE)
    with pytest.raises(
        AssertionError, match=r"The length of colors must equal with or greater than 2, but got 1"
    ):
        vis.draw_texts(["a", "b"], np.array([[5, 5], [20, 20]]), colors=["r"])
    masks = np.stack([IMAGE[..., 0] > 0] * 2)
    with pytest.raises(
        AssertionError, match=r"The length of colors must equal with or greater than 2, but got 1"
    ):
        vis.draw_binary_masks(masks, colors=["r"])


def test_points_take_one_colour_per_point_as_matplotlibs_scatter_does():
    with pytest.raises(ValueError, match=r"'c' argument has 2 elements, which is inconsistent"):
        Visualizer(image=IMAGE).draw_points(np.array([[5, 5]]), colors=["r", "b"])


def test_too_few_mask_alphas_leave_the_other_masks_undrawn_as_in_mmengine():
    first, second = np.zeros((2, 60, 80), dtype=bool)
    first[:10], second[20:30] = True, True
    vis = Visualizer(image=IMAGE)
    with pytest.warns(
        SuspiciousInputWarning, match=r"alphas has 1 entries for 2 masks: the last 1"
    ):
        vis.draw_binary_masks(np.stack([first, second]), alphas=[0.5])
    np.testing.assert_array_equal(
        vis.get_image(), drawn(lambda v: v.draw_binary_masks(first, alphas=0.5))
    )
    assert (vis.get_image()[25] == 40).all()  # the second mask: not drawn


@pytest.mark.parametrize("alpha", [2.0, 1.5, -0.5])
def test_mask_alphas_outside_0_1_extrapolate_and_clip_as_mmengines_add_weighted(alpha):
    # Blue (0, 0, 255) over grey 40: channel = 40 * (1 - alpha) + colour * alpha, clipped.
    mask = np.zeros((60, 80), dtype=bool)
    mask[:10] = True
    vis = Visualizer(image=IMAGE)
    with pytest.warns(SuspiciousInputWarning, match=rf"alphas is {alpha}, outside \[0, 1\]"):
        vis.draw_binary_masks(mask, colors=(0, 0, 255), alphas=alpha)
    image = vis.get_image()
    red, blue = (min(max(round(40 * (1 - alpha) + c * alpha), 0), 255) for c in (0, 255))
    assert image[5, 5].tolist() == [red, red, blue]
    assert (image[30] == 40).all()


def test_featmap_alpha_outside_0_1_extrapolates():
    featmap = torch.arange(12, dtype=torch.float32).reshape(1, 3, 4)
    overlay = np.full((3, 4, 3), 100, dtype=np.uint8)
    with pytest.warns(SuspiciousInputWarning, match=r"alpha is 2, outside \[0, 1\]"):
        heat = Visualizer.draw_featmap(featmap, overlay, alpha=2)
    plain = Visualizer.draw_featmap(featmap, overlay, alpha=1)  # the heatmap alone
    expected = np.clip(2 * plain.astype(float) - 100, 0, 255).astype(np.uint8)
    assert np.abs(heat.astype(int) - expected.astype(int)).max() <= 1


def test_strict_checks_refuse_alphas_outside_0_1(strict):
    with pytest.raises(ValueError, match=r"alphas must be a number in \[0, 1\], got 2.0"):
        Visualizer(image=IMAGE).draw_binary_masks(IMAGE[..., 0] > 0, alphas=2.0)
    with pytest.raises(ValueError, match=r"alpha must be a number in \[0, 1\], got 2"):
        Visualizer.draw_featmap(torch.ones(1, 3, 4), np.zeros((3, 4, 3), np.uint8), alpha=2)


def test_shape_alphas_outside_0_1_are_refused_as_under_mmengine():
    # MMEngine hands alpha to a matplotlib collection, which raises this ValueError.
    with pytest.raises(ValueError, match=r"alpha \(1.5\) is outside 0-1 range"):
        Visualizer(image=IMAGE).draw_bboxes(TWO_BOXES, alpha=1.5)


def test_visualizer_hands_non_numbers_to_the_local_backend_and_numbers_to_trackers(tmp_path):
    vis = Visualizer(
        vis_backends=[dict(type="LocalVisBackend"), dict(type="TensorboardVisBackend")],
        save_dir=str(tmp_path),
    )
    board = vis.get_backend("TensorboardVisBackend")
    received = []
    board.add_scalars = lambda scalars, step, *a, **k: received.append((dict(scalars), step))
    board.add_scalar = lambda *a, **k: received.append(a)
    with pytest.warns(SuspiciousInputWarning) as record:
        vis.add_scalars({"loss": torch.tensor(0.5), "phase": "warm-up"}, step=1)
        vis.add_scalar("note", ["a"], step=1)
    messages = [str(w.message) for w in record]
    assert any(
        "'phase' is not a number: TensorboardVisBackend record numbers only" in m for m in messages
    )
    assert any(
        "scalar 'phase' is not a number (str): written to scalars.json" in m for m in messages
    )
    assert received == [({"loss": 0.5}, 1)]  # and no add_scalar of the list
    vis.close()
    lines = (tmp_path / "vis_data" / "scalars.json").read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"loss": 0.5, "phase": "warm-up", "step": 1},
        {"note": ["a"], "step": 1},
    ]
    assert TensorboardVisBackend.numbers_only and not LocalVisBackend.numbers_only


def test_strict_mode_from_the_environment():
    code = "from treadle.visual.strict_checks import StrictChecks; print(StrictChecks.enabled)"
    for value, expected in (("1", "True"), ("0", "False"), ("", "False")):
        env = {**os.environ, STRICT_ENV: value}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == expected
    assert StrictChecks.enabled is False  # this process: not set
