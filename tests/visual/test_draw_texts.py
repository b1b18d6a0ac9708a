"""Pixel checks of draw_texts: where the ink lands, colours, background boxes, fallbacks."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.font_manager import FontProperties

from treadle.visual.visualizer import Visualizer


def black(height: int = 80, width: int = 200) -> Visualizer:
    return Visualizer(image=np.zeros((height, width, 3), dtype=np.uint8))


def ink_box(image: np.ndarray, channel: int | None = None) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) of the pixels that are not black, inclusive."""
    lit = image.sum(-1) > 0 if channel is None else image[..., channel] > 0
    rows, cols = np.flatnonzero(lit.any(1)), np.flatnonzero(lit.any(0))
    assert rows.size, "nothing was drawn"
    return rows[0], cols[0], rows[-1], cols[-1]


def test_text_ink_lies_below_right_of_its_position() -> None:
    image = black().draw_texts("Hello", np.array([20, 30]), colors="w", font_sizes=20).get_image()
    top, left, bottom, right = ink_box(image)
    # va='top', ha='left' (MMEngine's defaults): the text hangs from (20, 30).
    assert 30 <= top <= 34 and 20 <= left <= 23
    assert 30 + 14 < bottom < 30 + 32 and 20 + 40 < right < 20 + 80
    lit = image[image.sum(-1) > 0]
    assert (lit[:, 0] == lit[:, 1]).all() and lit.max() == 255  # white ink, anti-aliased


def test_colour_per_text() -> None:
    vis = black().draw_texts(
        ["red", "blue"], np.array([[5, 5], [100, 40]]), colors=["r", (0, 0, 255)], font_sizes=16
    )
    image = vis.get_image()
    assert ink_box(image, 0)[1] < 50 and ink_box(image, 2)[1] >= 100
    assert image[..., 1].max() == 0  # neither colour has green


@pytest.mark.parametrize(("horizontal", "vertical"), [("right", "bottom"), ("center", "center")])
def test_alignments(horizontal: str, vertical: str) -> None:
    vis = black().draw_texts(
        "Align",
        np.array([100, 40]),
        colors="w",
        font_sizes=20,
        horizontal_alignments=horizontal,
        vertical_alignments=vertical,
    )
    top, left, bottom, right = ink_box(vis.get_image())
    if horizontal == "right":
        assert right <= 101 and bottom <= 41
    else:
        assert abs((left + right) / 2 - 100) <= 2 and abs((top + bottom) / 2 - 40) <= 4


def test_fast_text_lands_where_matplotlib_puts_it() -> None:
    # font_properties routes a text through matplotlib's own Text: both must agree.
    position = np.array([30, 20])
    fast = black().draw_texts("person: 0.93", position, colors="w", font_sizes=14).get_image()
    exact = (
        black()
        .draw_texts(
            "person: 0.93",
            position,
            colors="w",
            font_sizes=14,
            font_properties=FontProperties(family=["sans-serif"]),
        )
        .get_image()
    )
    assert np.abs(np.subtract(ink_box(fast), ink_box(exact))).max() <= 2


def test_background_box() -> None:
    box = dict(facecolor="blue", alpha=1.0, pad=2, edgecolor="none")
    image = black().draw_texts("Tag", np.array([20, 20]), colors="w", bboxes=box).get_image()
    top, left, bottom, right = ink_box(image, 2)
    assert tuple(image[top + 1, left + 1]) == (0, 0, 255)  # the padding is pure box colour
    assert (image[top:bottom, left:right, 0] == 255).any()  # white text over it
    assert tuple(image[bottom + 3, right + 3]) == (0, 0, 0)


def test_styled_background_box_goes_through_matplotlib() -> None:
    box = dict(boxstyle="round", facecolor="blue", edgecolor="red")
    image = black().draw_texts("Tag", np.array([20, 20]), colors="w", bboxes=box).get_image()
    assert (image[..., 2] == 255).sum() > 50 and (image[..., 0] > 200).any()


def test_mathtext_is_drawn_by_matplotlib() -> None:
    image = black().draw_texts("$x^2$", np.array([20, 20]), colors="w", font_sizes=20).get_image()
    _, left, _, right = ink_box(image)
    third = (right - left) // 3
    x_top = ink_box(image[:, : left + third])[0]
    two_top = ink_box(image[:, right - third + 1 :])[0]
    assert two_top < x_top - 2  # the exponent is raised: rendered as math, not as "$x^2$"


def test_multiline_text_is_taller() -> None:
    one = ink_box(black().draw_texts("ab", np.array([5, 5]), colors="w").get_image())
    two = ink_box(black().draw_texts("ab\nab", np.array([5, 5]), colors="w").get_image())
    assert two[2] - two[0] > 1.8 * (one[2] - one[0])


def test_default_font_size_grows_with_the_image() -> None:
    small = Visualizer(image=np.zeros((100, 100, 3), dtype=np.uint8))
    large = Visualizer(image=np.zeros((2000, 2000, 3), dtype=np.uint8))
    height = {}
    for name, vis in (("small", small), ("large", large)):
        top, _, bottom, _ = ink_box(vis.draw_texts("H", np.array([5, 5]), colors="w").get_image())
        height[name] = bottom - top
    assert height["large"] > 1.8 * height["small"]


def test_text_outside_the_image_warns() -> None:
    with pytest.warns(UserWarning, match=r"1 of 2 texts lie partly outside the image"):
        black().draw_texts(["in", "out"], np.array([[5, 5], [250, 5]]))


def test_text_argument_errors() -> None:
    vis = black()
    with pytest.raises(ValueError, match=r"positions must have shape \(2, 2\), one row per text"):
        vis.draw_texts(["a", "b"], np.array([[1, 1], [2, 2], [3, 3]]))
    with pytest.raises(
        ValueError,
        match=r"font_sizes has 1 entries but there are 2 items.* \(The length of font_sizes must "
        r"equal with or greater than 2, but got 1\)",
    ):
        vis.draw_texts(["a", "b"], np.zeros((2, 2)), font_sizes=[8])
    with pytest.raises(ValueError, match=r"vertical_alignments: 'middle' is not one of top"):
        vis.draw_texts("a", np.zeros(2), vertical_alignments="middle")
    with pytest.raises(TypeError, match=r"texts must be a str or a list of str"):
        vis.draw_texts(3, np.zeros(2))
    with pytest.raises(TypeError, match=r"bboxes must be a dict, got str"):
        vis.draw_texts("a", np.zeros(2), bboxes="black")
    with pytest.raises(ValueError, match=r"colors: unknown colour 'whyte'"):
        vis.draw_texts("a", np.zeros(2), colors="whyte")
