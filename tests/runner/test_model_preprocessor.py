"""BaseDataPreprocessor (moving nested batches to its device) and ImgDataPreprocessor
(channel swap, normalization, padding, stacking, and the errors for what a user can get
wrong)."""

from __future__ import annotations

from collections import namedtuple

import pytest
import torch

from treadle.runner.model import BaseDataPreprocessor, ImgDataPreprocessor
from treadle.runner.registry import MODELS
from treadle.runner.structures import BaseDataElement

Pair = namedtuple("Pair", ["left", "right"])


def test_cast_data_moves_every_tensor_and_keeps_the_structure():
    preprocessor = BaseDataPreprocessor().to("meta")
    sample = BaseDataElement(label=torch.ones(1), metainfo={"id": 3})
    data = {
        "inputs": [torch.ones(2), (torch.zeros(1), "text")],
        "pair": Pair(torch.ones(1), b"raw"),
        "data_samples": [sample],
        "meta": {"name": "a", "count": 2, "none": None},
    }
    cast = preprocessor.cast_data(data)
    assert cast["inputs"][0].device.type == "meta"
    assert isinstance(cast["inputs"][1], tuple) and cast["inputs"][1][1] == "text"
    assert cast["inputs"][1][0].device.type == "meta"
    assert isinstance(cast["pair"], Pair) and cast["pair"].right == b"raw"
    assert cast["pair"].left.device.type == "meta"
    assert cast["data_samples"][0].label.device.type == "meta"
    assert cast["data_samples"][0].id == 3
    assert cast["meta"] == {"name": "a", "count": 2, "none": None}


def test_forward_is_cast_data_and_device_starts_on_cpu():
    preprocessor = BaseDataPreprocessor(non_blocking=True)
    assert preprocessor.device == torch.device("cpu")
    tensor = torch.ones(2)
    assert preprocessor({"inputs": tensor}, training=True)["inputs"] is tensor


def test_moves_track_the_device():
    preprocessor = BaseDataPreprocessor()
    assert preprocessor.to(torch.float16).device == torch.device("cpu")
    assert preprocessor.to(device="meta").device == torch.device("meta")
    assert preprocessor.cpu().device == torch.device("cpu")
    assert preprocessor.to(torch.empty(1, device="meta")).device == torch.device("meta")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_a_batch_already_on_the_gpu_is_kept_when_the_device_names_no_index():
    preprocessor = BaseDataPreprocessor().to("cuda")
    assert preprocessor.device == torch.device("cuda")  # as set, as MMEngine reports it
    on_gpu = torch.ones(2, device="cuda")
    batch = preprocessor({"inputs": on_gpu, "more": [on_gpu]})
    assert batch["inputs"] is on_gpu and batch["more"][0] is on_gpu
    assert preprocessor.cast_data(on_gpu) is on_gpu
    assert preprocessor({"inputs": torch.ones(2)})["inputs"].device == on_gpu.device


def test_a_subclass_may_set_the_device_itself():
    preprocessor = BaseDataPreprocessor()
    preprocessor._device = "meta"  # as MMEngine-era subclasses do
    assert preprocessor.device == torch.device("meta")
    assert preprocessor({"inputs": torch.ones(2)})["inputs"].device.type == "meta"


def test_a_preprocessor_pickled_with_a_plain_device_attribute_loads():
    import pickle

    preprocessor = BaseDataPreprocessor()
    state = preprocessor.__getstate__()
    legacy = {k: v for k, v in state.items() if not k.startswith("_device_")}
    legacy["_device"] = torch.device("meta")  # what MMEngine and treadle 0.1.0 pickled
    revived = BaseDataPreprocessor.__new__(BaseDataPreprocessor)
    revived.__setstate__(legacy)
    assert revived.device == torch.device("meta")
    assert pickle.loads(pickle.dumps(revived)).device == torch.device("meta")


def test_accelerator_move_to_wrong_type_is_refused():
    with pytest.raises(ValueError, match=r"\.cuda\(\) was given the meta device 'meta'"):
        BaseDataPreprocessor().cuda("meta")


def test_both_preprocessors_are_registered():
    assert type(MODELS.build(dict(type="BaseDataPreprocessor"))) is BaseDataPreprocessor
    built = MODELS.build(dict(type="ImgDataPreprocessor", pad_size_divisor=4))
    assert isinstance(built, ImgDataPreprocessor) and built.pad_size_divisor == 4


def test_list_of_images_is_normalized_then_padded_and_stacked():
    preprocessor = ImgDataPreprocessor(
        mean=[1.0, 2.0, 3.0], std=[2.0, 2.0, 2.0], pad_size_divisor=4, pad_value=-7
    )
    first = torch.full((3, 3, 5), 5, dtype=torch.uint8)
    second = torch.full((3, 4, 2), 9, dtype=torch.uint8)
    samples = [BaseDataElement(), BaseDataElement()]
    result = preprocessor({"inputs": [first, second], "data_samples": samples})
    inputs = result["inputs"]
    assert inputs.shape == (2, 3, 4, 8) and inputs.dtype == torch.float32
    expected_first = (first.float() - torch.tensor([1.0, 2.0, 3.0]).view(3, 1, 1)) / 2
    assert torch.equal(inputs[0, :, :3, :5], expected_first)
    assert torch.all(inputs[0, :, 3:, :] == -7) and torch.all(inputs[0, :, :, 5:] == -7)
    assert torch.all(inputs[1, :, :, 2:] == -7)
    assert result["data_samples"] is not samples and len(result["data_samples"]) == 2


def test_bgr_to_rgb_swaps_before_normalization():
    image = torch.stack([torch.full((2, 2), v) for v in (10.0, 20.0, 30.0)])
    for flag in ("bgr_to_rgb", "rgb_to_bgr"):
        preprocessor = ImgDataPreprocessor(mean=[30, 20, 10], std=[1, 1, 1], **{flag: True})
        assert torch.equal(preprocessor({"inputs": [image]})["inputs"], torch.zeros(1, 3, 2, 2))


def test_batched_tensor_is_swapped_normalized_and_padded():
    preprocessor = ImgDataPreprocessor(
        mean=[0.5], std=[0.5], pad_size_divisor=3, pad_value=9, bgr_to_rgb=True
    )
    images = torch.arange(2 * 3 * 2 * 4, dtype=torch.float32).view(2, 3, 2, 4)
    result = preprocessor({"inputs": images})
    assert result["inputs"].shape == (2, 3, 3, 6) and result["data_samples"] is None
    expected = (images[:, [2, 1, 0]] - 0.5) / 0.5
    assert torch.equal(result["inputs"][:, :, :2, :4], expected)
    assert torch.all(result["inputs"][:, :, 2:, :] == 9)


def test_without_mean_and_std_images_are_only_converted_to_float():
    result = ImgDataPreprocessor()({"inputs": torch.ones(1, 1, 2, 2, dtype=torch.uint8)})
    assert result["inputs"].dtype == torch.float32 and torch.all(result["inputs"] == 1)


def test_gray_images_with_one_mean_value():
    result = ImgDataPreprocessor(mean=[1], std=[2])({"inputs": [torch.full((1, 2, 2), 5.0)]})
    assert torch.equal(result["inputs"], torch.full((1, 1, 2, 2), 2.0))


def test_mean_and_std_are_not_saved_in_the_state_dict():
    assert ImgDataPreprocessor(mean=[1, 2, 3], std=[1, 2, 3]).state_dict() == {}


def test_img_preprocessor_moves_with_the_device():
    preprocessor = ImgDataPreprocessor(mean=[1], std=[1]).to("meta")
    result = preprocessor({"inputs": [torch.ones(1, 2, 2)]})
    assert result["inputs"].device.type == "meta"


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            dict(bgr_to_rgb=True, rgb_to_bgr=True),
            AssertionError,
            "both True \\(`bgr2rgb` and `rgb2bgr` cannot be set to True at the same time\\)",
        ),
        (
            dict(mean=[1, 2, 3]),
            AssertionError,
            "mean is set but std is None; mean and std should be both set",
        ),
        (dict(std=[1, 2, 3]), AssertionError, "std is set but mean is None; mean and std should"),
        (
            dict(mean=[1, 2], std=[1, 2]),
            AssertionError,
            r"`mean` should have 1 value .* got 2: \[1, 2\]",
        ),
        (dict(mean=[1], std=[1, 2, 3, 4]), AssertionError, "`std` should have 1 value .* got 4"),
        (
            dict(mean=1.0, std=1.0),
            TypeError,
            "mean must be a sequence of 1 or 3 numbers, got float",
        ),
        (dict(pad_size_divisor=0), ValueError, "pad_size_divisor must be >= 1, got 0"),
        (dict(pad_size_divisor=2.0), TypeError, "pad_size_divisor must be an int >= 1, got float"),
    ],
)
def test_constructor_errors_name_the_argument(kwargs, error, message):
    with pytest.raises(error, match=message) as caught:
        ImgDataPreprocessor(**kwargs)
    if error is AssertionError:
        # What MMEngine asserts is also the ValueError it is.
        assert isinstance(caught.value, ValueError)


@pytest.mark.parametrize(
    ("kwargs", "data", "error", "message"),
    [
        (
            dict(mean=[1, 2, 3], std=[1, 2, 3]),
            {"inputs": [torch.ones(3, 2, 2), torch.ones(1, 2, 2)]},
            AssertionError,
            r"If the mean has 3 values, the input tensor should be in shape of \(3, H, W\) "
            r"\(one value per channel\), but inputs\[1\] has shape \(1, 2, 2\)",
        ),
        (
            dict(mean=[1, 2, 3], std=[1, 2, 3]),
            {"inputs": [torch.ones(2, 2)]},
            AssertionError,
            r"If the mean has 3 values.*but inputs\[0\] has shape \(2, 2\)",
        ),
        (
            dict(mean=[1, 2, 3], std=[1, 2, 3]),
            {"inputs": torch.ones(2, 1, 2, 2)},
            AssertionError,
            r"but data\['inputs'\] has shape \(2, 1, 2, 2\)",
        ),
        (
            dict(bgr_to_rgb=True),
            {"inputs": [torch.ones(4, 2, 2)]},
            ValueError,
            r"needs 3 channels, but inputs\[0\] has shape \(4, 2, 2\)",
        ),
        (
            {},
            {"inputs": torch.ones(3, 2, 2)},
            ValueError,
            r"must be an \(N, C, H, W\) tensor, got shape \(3, 2, 2\)",
        ),
        (
            {},
            {"inputs": [torch.ones(2, 2, 2, 2)]},
            ValueError,
            r"a \(C, H, W\) tensor or an \(H, W\) gray image, but inputs\[0\] has shape "
            r"\(2, 2, 2, 2\)",
        ),
        ({}, {"inputs": []}, TypeError, "got an empty sequence"),
        ({}, {"inputs": "image.png"}, TypeError, "got str"),
        ({}, {"inputs": [torch.ones(1, 2, 2), "x"]}, TypeError, "got list"),
        ({}, {"img": [torch.ones(1, 1, 1)]}, KeyError, r"no 'inputs' key \(keys: \['img'\]\)"),
        ({}, [{"inputs": torch.ones(1, 1, 1)}], TypeError, "takes a dict .* got list"),
    ],
)
def test_forward_errors_name_what_was_given(kwargs, data, error, message):
    with pytest.raises(error, match=message):
        ImgDataPreprocessor(**kwargs)(data)


def test_a_gray_image_without_its_channel_dimension_is_one_channel():
    preprocessor = ImgDataPreprocessor(mean=[1.0], std=[2.0], pad_size_divisor=4)
    result = preprocessor({"inputs": [torch.full((2, 3), 5.0), torch.full((3, 2), 3.0)]})
    assert result["inputs"].shape == (2, 1, 4, 4)
    assert result["inputs"][0, 0, 0, 0] == 2.0 and result["inputs"][1, 0, 0, 0] == 1.0


def test_one_mean_with_three_stds_normalizes_each_channel():
    preprocessor = ImgDataPreprocessor(mean=[127.5], std=[1, 2, 3])
    result = preprocessor({"inputs": [torch.full((3, 1, 1), 133.5)]})
    assert result["inputs"].flatten().tolist() == [6.0, 3.0, 2.0]


def test_images_with_different_channel_counts_are_refused():
    with pytest.raises(ValueError, match=r"must be equal; got shapes \[\(1, 2, 2\), \(2, 2, 2\)\]"):
        ImgDataPreprocessor()({"inputs": [torch.ones(1, 2, 2), torch.ones(2, 2, 2)]})


def test_mean_and_std_may_be_tensors():
    mean = torch.tensor([1.0, 2.0, 3.0])
    preprocessor = ImgDataPreprocessor(mean=mean, std=torch.tensor([1.0]))
    mean.zero_()  # the preprocessor keeps its own copy
    result = preprocessor({"inputs": [torch.full((3, 1, 1), 3.0)]})
    assert result["inputs"].flatten().tolist() == [2.0, 1.0, 0.0]
