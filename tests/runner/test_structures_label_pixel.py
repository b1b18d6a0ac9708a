"""LabelData and PixelData through their public API."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import treadle.runner.structures as structures
from treadle.runner.structures import LabelData, PixelData


def test_package_exports():
    assert structures.__all__ == ["BaseDataElement", "InstanceData", "LabelData", "PixelData"]


# ---- LabelData -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("onehot", "label"),
    [
        (torch.tensor([0, 1, 0, 1]), [1, 3]),
        (torch.tensor([0, 0, 1]), [2]),
        (torch.zeros(3), []),
        (torch.tensor([False, True]), [1]),
        (torch.tensor([], dtype=torch.long), []),
    ],
)
def test_onehot_to_label(onehot, label):
    result = LabelData.onehot_to_label(onehot)
    assert result.dtype == torch.long and result.ndim == 1
    assert result.tolist() == label


@pytest.mark.parametrize(
    ("onehot", "error", "message"),
    [
        (
            torch.tensor([0, 2]),
            ValueError,
            "input is not one-hot and can not convert to label: .* got shape \\(2,\\)",
        ),
        (torch.tensor([-1, 1]), ValueError, "1-D tensor of values in \\[0, 1\\]"),
        (torch.tensor([[0, 1]]), ValueError, "got shape \\(1, 2\\)"),
        (np.array([0, 1]), AssertionError, "onehot must be a torch.Tensor, got ndarray"),
    ],
)
def test_onehot_to_label_refuses(onehot, error, message):
    with pytest.raises(error, match=message) as raised:
        LabelData.onehot_to_label(onehot)
    if error is AssertionError:  # MMEngine asserts; the error says it is a TypeError too
        assert isinstance(raised.value, TypeError)


def test_onehot_to_label_counts_every_value_between_zero_and_one():
    # As MMEngine: values in [0, 1], each non-zero one a label.
    assert LabelData.onehot_to_label(torch.tensor([0.0, 0.5, 1.0])).tolist() == [1, 2]


def test_label_to_onehot():
    assert LabelData.label_to_onehot(torch.tensor([1, 3]), 5).tolist() == [0, 1, 0, 1, 0]
    assert LabelData.label_to_onehot(torch.tensor([1, 1]), 3).tolist() == [0, 1, 0]
    assert LabelData.label_to_onehot(torch.tensor(2), 3).tolist() == [0, 0, 1]
    assert LabelData.label_to_onehot(torch.tensor([], dtype=torch.long), 2).tolist() == [0, 0]
    assert LabelData.label_to_onehot(torch.tensor([0], dtype=torch.int32), 2).dtype == torch.int32
    assert LabelData.label_to_onehot(torch.tensor([0]), np.int64(2)).tolist() == [1, 0]


def test_label_to_onehot_round_trip():
    label = torch.tensor([0, 4, 7])
    onehot = LabelData.label_to_onehot(label, 8)
    assert torch.equal(LabelData.onehot_to_label(onehot), label)


@pytest.mark.parametrize(
    ("label", "num_classes", "error", "message"),
    [
        (torch.tensor([1, 5]), 5, (ValueError, AssertionError), "label 5 is out of range"),
        (torch.tensor([-6, 2]), 5, (IndexError,), "label -6 is out of range for num_classes=5"),
        (torch.tensor([0]), 0, (ValueError, AssertionError), "num_classes must be positive"),
        (torch.tensor([0]), 3.0, (TypeError,), "num_classes must be an int, got float: 3.0"),
        (torch.tensor([0]), True, (TypeError,), "num_classes must be an int, got bool"),
        (torch.tensor([1.0]), 3, (TypeError, IndexError), "class indices, got torch.float32"),
        (torch.tensor([[0, 1]]), 3, (ValueError, RuntimeError), "0-D or 1-D, got shape"),
        ([1], 3, (TypeError, AssertionError), "label must be a torch.Tensor, got list"),
    ],
)
def test_label_to_onehot_refuses(label, num_classes, error, message):
    # Each error is also the class MMEngine raises for the same input (the second one).
    with pytest.raises(error[0], match=message) as raised:
        LabelData.label_to_onehot(label, num_classes)
    assert isinstance(raised.value, error)


def test_label_to_onehot_takes_negative_and_boolean_labels_as_mmengine_does():
    with pytest.warns(UserWarning, match="label -1 is negative: it marks class 4 of 5"):
        assert LabelData.label_to_onehot(torch.tensor([-1, 2]), 5).tolist() == [0, 0, 1, 0, 1]
    mask = torch.tensor([True, False, True])
    assert LabelData.label_to_onehot(mask, 3).tolist() == [True, False, True]


def test_label_data_is_a_plain_element():
    labels = LabelData(metainfo=dict(num_classes=3), label=torch.tensor([1]), score=torch.ones(3))
    assert labels.keys() == ["label", "score"]
    with pytest.raises(TypeError):
        len(labels)


# ---- PixelData -----------------------------------------------------------------------------


def make_pixels() -> PixelData:
    return PixelData(
        metainfo=dict(scale=2),
        maps=torch.arange(60).view(3, 4, 5),
        seg=np.arange(20).reshape(1, 4, 5),
    )


def test_two_dimensional_values_get_one_channel_with_a_warning():
    with pytest.warns(UserWarning, match=r"field 'seg'.* from \(4, 5\) to \(1, 4, 5\)"):
        pixels = PixelData(seg=np.zeros((4, 5)))
    assert pixels.seg.shape == (1, 4, 5)
    with pytest.warns(UserWarning, match="field 'mask'"):
        pixels.mask = torch.zeros(4, 5, dtype=torch.uint8)
    assert pixels.mask.shape == (1, 4, 5) and pixels.mask.dtype == torch.uint8


def test_shape():
    assert make_pixels().shape == (4, 5)
    assert PixelData().shape is None


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ([[1]], TypeError, "field 'extra': Can not set <class 'list'>, only support torch.Tensor"),
        (torch.zeros(5), ValueError, r"\(C, H, W\): The dim of value must be 2 or 3, but got 1"),
        (torch.zeros(1, 1, 4, 5), ValueError, r"but got 4 \(shape \(1, 1, 4, 5\)\)"),
        (
            torch.zeros(2, 4, 6),
            ValueError,
            r"field 'extra' has height and width \(4, 6\), but field 'maps' has \(4, 5\): "
            r"the height and width of values is not consistent with the shape",
        ),
    ],
)
def test_bad_values_are_refused(value, error, message):
    pixels = make_pixels()
    with pytest.raises(error, match=message) as raised:
        pixels.extra = value
    assert isinstance(raised.value, AssertionError)  # what MMEngine raises there
    assert "extra" not in pixels


def test_the_only_map_can_be_replaced_by_another_size():
    pixels = PixelData(maps=torch.zeros(1, 2, 2))
    pixels.maps = torch.zeros(1, 3, 3)
    assert pixels.shape == (3, 3)


@pytest.mark.parametrize(
    ("item", "shape", "first"),
    [
        ((slice(1, 3), slice(0, 2)), (2, 2), 5),
        ((1, slice(0, 2)), (1, 2), 5),
        ((1, 2), (1, 1), 7),
        ((-1, slice(3, None)), (1, 2), 18),
        ((np.int64(0), slice(None)), (1, 5), 0),
    ],
)
def test_crops_cut_every_map(item, shape, first):
    pixels = make_pixels()
    crop = pixels[item]
    assert crop.shape == shape
    assert crop.maps.shape == (3, *shape) and crop.seg.shape == (1, *shape)
    assert crop.maps[0, 0, 0].item() == first and crop.seg[0, 0, 0] == first
    assert crop.metainfo == dict(scale=2)
    assert crop.maps.data_ptr() == pixels.maps.data_ptr() + first * pixels.maps.element_size()


@pytest.mark.parametrize(
    ("item", "error", "message"),
    [
        (slice(1, 3), TypeError, r"indexed with \[rows, columns\], got slice"),
        (1, TypeError, "Unsupported type <class 'int'> for slicing PixelData"),
        ((torch.tensor([True]), slice(1)), TypeError, "row index must be an int or a slice"),
        (
            (0, "a"),
            TypeError,
            "The type of element in input must be int or slice, but got <class 'str'>",
        ),
    ],
)
def test_bad_crops_say_what_is_wrong(item, error, message):
    with pytest.raises(error, match=message):
        make_pixels()[item]


def test_three_indices_are_an_index_error_and_mmengines_assertion_error():
    with pytest.raises(IndexError, match="Only support to slice height and width") as raised:
        make_pixels()[0, 0, 0]
    assert isinstance(raised.value, AssertionError)


@pytest.mark.parametrize(
    ("item", "shape"),
    [((4, 0), (0, 1)), ((0, 9), (1, 0)), ((-5, 0), (1, 1)), ((0, -6), (1, 1))],
)
def test_out_of_range_crops_are_mmengines_with_a_warning(item, shape):
    # MMEngine crops value[..., i::size]: empty past the end, the first row before the start.
    with pytest.warns(UserWarning, match="out of range"):
        crop = make_pixels()[item]
    assert crop.maps.shape == (3, *shape)
    if shape == (1, 1):
        assert crop.maps[0, 0, 0].item() == 0


def test_a_bool_crop_index_is_row_zero_or_one():
    assert make_pixels()[True, 0].maps[0, 0, 0].item() == 5


def test_conversions_keep_the_shape_rules():
    pixels = make_pixels()
    assert isinstance(pixels.numpy().maps, np.ndarray)
    assert isinstance(pixels.to_tensor().seg, torch.Tensor)
    assert pixels.new(maps=torch.zeros(2, 7, 7)).shape == (7, 7)
