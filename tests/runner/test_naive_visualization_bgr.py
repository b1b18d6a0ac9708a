"""Issue 41: NaiveVisualizationHook hands the visualizer a 3-channel input as BGR unless its
``img_norm_cfg`` says ``to_bgr=False``, as MMEngine's ``tensor2imgs`` (``to_bgr=True`` by
default) does."""

from __future__ import annotations

from types import SimpleNamespace
from unittest.mock import Mock

import pytest
import torch

from treadle.runner.hooks import NaiveVisualizationHook
from treadle.runner.hooks.naive_visualization_hook import tensor_to_image


def _rgb() -> torch.Tensor:
    image = torch.zeros(3, 2, 2)
    image[0], image[1], image[2] = 200, 100, 10  # R, G, B
    return image


@pytest.mark.parametrize(
    ("img_norm_cfg", "pixel"),
    [
        (None, [10, 100, 200]),  # MMEngine's default: to BGR
        (dict(mean=(0, 0, 0), std=(1, 1, 1)), [10, 100, 200]),
        (dict(to_bgr=True), [10, 100, 200]),
        (dict(to_bgr=False), [200, 100, 10]),
        (dict(to_rgb=False), [200, 100, 10]),  # mmcv's key, read when to_bgr is absent
        (dict(to_rgb=True), [10, 100, 200]),
    ],
)
def test_channels_are_swapped_unless_to_bgr_is_false(img_norm_cfg, pixel) -> None:
    assert tensor_to_image(_rgb(), img_norm_cfg)[0, 0].tolist() == pixel


def test_a_grey_input_is_never_swapped() -> None:
    grey = torch.full((1, 2, 2), 7.0)
    assert tensor_to_image(grey).shape == (2, 2, 1)
    assert (tensor_to_image(grey) == 7).all()


def test_the_hook_draws_a_plain_input_as_bgr() -> None:
    runner = Mock(iter=0)
    sample = SimpleNamespace(get=lambda key, default=None: dict(ori_shape=(2, 2)).get(key, default))
    NaiveVisualizationHook().after_test_iter(
        runner, 0, dict(inputs=[_rgb()], data_samples=[sample]), outputs=["prediction"]
    )
    (name, image, *_), _ = runner.visualizer.add_datasample.call_args
    assert name == "test_0_0" and image[1, 1].tolist() == [10, 100, 200]


def test_the_pixels_are_mmengines() -> None:
    # MMEngine's hook turns the input into pixels with tensor2imgs(input, **img_norm_cfg).
    dl_utils = pytest.importorskip("mmengine.utils.dl_utils")
    tensor = torch.rand(3, 4, 5, generator=torch.Generator().manual_seed(0)) * 2 - 0.5
    for cfg in (dict(), dict(mean=(100, 110, 120), std=(50, 60, 70)), dict(to_bgr=False)):
        expected = dl_utils.tensor2imgs(tensor[None], **cfg)[0]
        # MMEngine hands on floats; treadle rounds down into uint8 pixels, as set_image does.
        expected = expected.clip(0, 255).astype("uint8")
        assert (tensor_to_image(tensor, cfg) == expected).all(), cfg
