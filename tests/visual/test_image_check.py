"""Images handed to set_image / add_image: accepted forms, and a named error for the rest."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from treadle.visual.image_check import check_image


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
        (np.full((2, 2, 3), 300), r"values in \[300, 300\]; pixel values must lie in \[0, 255\]"),
        (np.full((2, 2, 3), -1.0), r"values in \[-1, -1\]"),
        (np.full((2, 2, 3), np.nan), r"values in \[nan, nan\]"),
    ],
)
def test_wrong_shapes_and_ranges_are_value_errors(image, message):
    with pytest.raises(ValueError, match=message):
        check_image(image, "img")


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (np.zeros((2, 2, 3), dtype=bool), "integer or float dtype .*got dtype bool"),
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
