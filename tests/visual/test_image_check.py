"""Images handed to set_image / add_image: accepted forms, and a named error for the rest."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from treadle.visual import Visualizer
from treadle.visual.image_check import check_image
from treadle.visual.strict_checks import SuspiciousInputWarning


def test_rgb_uint8_passes_unchanged():
    image = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    checked = check_image(image)
    assert checked.dtype == np.uint8 and checked.shape == (2, 3, 3)
    np.testing.assert_array_equal(checked, image)


def test_grey_is_repeated_to_three_channels_and_alpha_is_dropped():
    grey = np.array([[0, 128], [255, 7]], dtype=np.uint8)
    np.testing.assert_array_equal(check_image(grey)[..., 2], grey)
    rgba = np.zeros((2, 2, 4), dtype=np.uint8)
    rgba[..., 0], rgba[..., 3] = 200, 9
    checked = check_image(rgba)
    assert checked.shape == (2, 2, 3) and checked[0, 0].tolist() == [200, 0, 0]
    assert checked.flags.c_contiguous


def test_other_numeric_dtypes_in_range_are_cast():
    checked = check_image(np.full((2, 2, 3), 200.7))
    assert checked.dtype == np.uint8 and checked[0, 0, 0] == 200  # truncated, as MMEngine
    assert check_image(np.full((2, 2), 255, dtype=np.int64))[1, 1, 1] == 255


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (np.zeros((3, 8, 8)), r"shape \(3, 8, 8\); it looks channel-first .*transpose\(1, 2, 0\)"),
        (np.zeros((8, 8, 2)), r"must have shape \(H, W, 3\) .*got shape \(8, 8, 2\)$"),
        (np.zeros(5), r"got shape \(5,\)"),
        (np.zeros((0, 4, 3)), r"img is empty: shape \(0, 4, 3\)"),
    ],
)
def test_wrong_shapes_are_value_errors(image, message):
    with pytest.raises(ValueError, match=message):
        check_image(image, "img")


OUT_OF_RANGE = [
    # (image, its first pixel as MMEngine's astype('uint8') makes it, the range shown)
    (np.full((2, 2, 3), 300), 44, r"\[300, 300\]"),
    (np.full((2, 2, 3), -1.0), 255, r"\[-1, -1\]"),
    (np.full((2, 2, 3), 300.7), 44, r"\[300.7, 300.7\]"),
    (np.full((2, 2, 3), -5.5), 251, r"\[-5.5, -5.5\]"),
    (np.array([[np.nan, 3.0], [np.inf, 256]]), 0, r"\[3, 256\] and NaN or infinities"),
]


@pytest.mark.parametrize(("image", "pixel", "shown"), OUT_OF_RANGE)
def test_values_outside_0_255_wrap_around_with_a_warning_as_in_mmengine(image, pixel, shown):
    with pytest.warns(SuspiciousInputWarning, match=rf"img has values in {shown}, outside 0-255"):
        checked = check_image(image, "img")
    assert checked.dtype == np.uint8 and checked[0, 0, 0] == pixel


@pytest.mark.parametrize(("image", "pixel", "shown"), OUT_OF_RANGE)
def test_strict_checks_refuse_values_outside_0_255(strict, image, pixel, shown):
    with pytest.raises(
        ValueError, match=rf"values in {shown}; pixel values must lie in \[0, 255\]"
    ):
        check_image(image, "img")


def test_a_bool_image_is_drawn_as_0_and_1_with_a_warning_as_in_mmengine():
    image = np.zeros((2, 2, 3), dtype=bool)
    image[0, 0] = True
    with pytest.warns(SuspiciousInputWarning, match=r"img has dtype bool: .* 1 and 0"):
        checked = check_image(image, "img")
    assert checked[0, 0].tolist() == [1, 1, 1] and checked[1, 1].tolist() == [0, 0, 0]
    with pytest.warns(SuspiciousInputWarning):
        assert (Visualizer(image=image).get_image()[0, 0] == 1).all()


def test_strict_checks_refuse_a_bool_image(strict):
    with pytest.raises(TypeError, match=r"integer or float dtype .*got dtype bool"):
        check_image(np.zeros((2, 2, 3), dtype=bool), "img")


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (np.zeros((2, 2, 3), dtype=complex), "got dtype complex128"),
        ([[0, 1], [2, 3]], "img must be a numpy array of shape \\(H, W, 3\\), got list$"),
        (torch.zeros(2, 2, 3), "got Tensor \\(convert a tensor with .cpu\\(\\).numpy\\(\\)\\)"),
    ],
)
def test_wrong_types_are_type_errors(image, message):
    with pytest.raises(TypeError, match=message):
        check_image(image, "img")


def test_float_images_in_unit_range_warn_that_they_draw_black():
    with pytest.warns(UserWarning, match=r"pred is a float image with values in \[0, 1\]"):
        check_image(np.full((2, 2, 3), 0.5), "pred")
