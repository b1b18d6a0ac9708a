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
        (torch.tensor([0, 2]), ValueError, "must be a 1-D tensor of 0s and 1s, got shape \\(2,\\)"),
        (torch.tensor([0.0, 0.5]), ValueError, "1-D tensor of 0s and 1s"),
        (torch.tensor([[0, 1]]), ValueError, "got shape \\(1, 2\\)"),
        (np.array([0, 1]), TypeError, "onehot must be a torch.Tensor, got ndarray"),
    ],
)
def test_onehot_to_label_refuses(onehot, error, message):
    with pytest.raises(error, match=message):
        LabelData.onehot_to_label(onehot)


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
        (torch.tensor([1, 5]), 5, ValueError, "label 5 is out of range for num_classes=5"),
        (torch.tensor([-1, 2]), 5, ValueError, "label -1 is out of range for num_classes=5"),
        (torch.tensor([0]), 0, ValueError, "num_classes must be positive, got 0"),
        (torch.tensor([0]), 3.0, TypeError, "num_classes must be an int, got float: 3.0"),
        (torch.tensor([0]), True, TypeError, "num_classes must be an int, got bool"),
        (torch.tensor([1.0]), 3, TypeError, "integer class indices, got torch.float32"),
        (torch.tensor([True]), 3, TypeError, "integer class indices, got torch.bool"),
        (torch.tensor([[0, 1]]), 3, ValueError, "0-D or 1-D, got shape \\(1, 2\\)"),
        ([1], 3, TypeError, "label must be a torch.Tensor, got list"),
    ],
)
def test_label_to_onehot_refuses(label, num_classes, error, message):
    with pytest.raises(error, match=message):
        LabelData.label_to_onehot(label, num_classes)


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
        ([[1]], TypeError, "field 'extra' must be a torch.Tensor or a numpy.ndarray, got list"),
        (torch.zeros(5), ValueError, r"field 'extra' must be \(H, W\) or \(C, H, W\), got 1 dim"),
        (torch.zeros(1, 1, 4, 5), ValueError, r"got 4 dimensions: shape \(1, 1, 4, 5\)"),
        (
            torch.zeros(2, 4, 6),
            ValueError,
            r"field 'extra' has height and width \(4, 6\), but field 'maps' has \(4, 5\)",
        ),
    ],
)
def test_bad_values_are_refused(value, error, message):
    pixels = make_pixels()
    with pytest.raises(error, match=message):
        pixels.extra = value
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
        (1, TypeError, r"indexed with \[rows, columns\], got int"),
        ((slice(1), slice(1), slice(1)), IndexError, "2 indices, got 3"),
        ((torch.tensor([True]), slice(1)), TypeError, "row index must be an int or a slice"),
        ((0, "a"), TypeError, "column index must be an int or a slice, got str"),
        ((4, 0), IndexError, "row index 4 is out of range for PixelData row 4"),
        ((0, -6), IndexError, "column index -6 is out of range for PixelData column 5"),
    ],
)
def test_bad_crops_say_what_is_wrong(item, error, message):
    with pytest.raises(error, match=message):
        make_pixels()[item]


def test_conversions_keep_the_shape_rules():
    pixels = make_pixels()
    assert isinstance(pixels.numpy().maps, np.ndarray)
    assert isinstance(pixels.to_tensor().seg, torch.Tensor)
    assert pixels.new(maps=torch.zeros(2, 7, 7)).shape == (7, 7)
