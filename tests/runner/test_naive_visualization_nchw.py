"""Issue 41: NaiveVisualizationHook takes an NCHW input in a per-sample dict, as MMEngine's does
(its first image), and honours ``to_bgr`` as well as ``to_rgb`` in ``img_norm_cfg``."""

from __future__ import annotations

from unittest.mock import Mock

import numpy as np
import pytest
import torch

from treadle.runner.hooks import NaiveVisualizationHook
from treadle.runner.hooks.naive_visualization_hook import InputImageError, tensor_to_image
from treadle.runner.structures import BaseDataElement


def test_nchw_inputs_of_a_per_sample_dict_are_drawn() -> None:
    hook = NaiveVisualizationHook()
    runner = Mock(iter=3)
    inputs = torch.zeros(1, 3, 15, 15)
    inputs[0, 0] = 1.0  # the first channel
    sample = BaseDataElement(
        metainfo=dict(
            img_norm_cfg=dict(mean=(0, 0, 0), std=(100, 100, 100), to_bgr=True),
            scale=(10, 10),
            pad_shape=(15, 15, 3),
            ori_height=5,
            ori_width=5,
            img_path="dir/tmp.jpg",
        )
    )
    prediction = BaseDataElement()
    hook.after_test_iter(runner, 0, [dict(inputs=inputs, data_sample=sample)], [prediction])
    (name, image, drawn, draw_gt, draw_pred), kwargs = runner.visualizer.add_datasample.call_args
    assert name == "tmp.jpg" and drawn is prediction and (draw_gt, draw_pred) == (True, True)
    assert kwargs == dict(step=3)
    assert image.shape == (5, 5, 3) and image.dtype == np.uint8
    assert (image[..., 2] == 100).all() and not image[..., :2].any()  # to_bgr swapped R and B


def test_an_nchw_tensor_of_several_images_gives_the_first_with_a_warning() -> None:
    batch = torch.stack([torch.full((3, 2, 2), 10.0), torch.full((3, 2, 2), 20.0)])
    with pytest.warns(UserWarning, match=r"an input holds 2 images .*only the first is drawn"):
        image = tensor_to_image(batch)
    assert (image == 10).all()


def test_an_input_of_another_rank_is_refused_as_mmengine_asserts() -> None:
    with pytest.raises(
        ValueError, match=r"an input image must be a CHW tensor \(or NCHW.*got shape \(4, 4\)"
    ) as error:
        tensor_to_image(torch.zeros(4, 4))
    assert isinstance(error.value, AssertionError) and isinstance(error.value, InputImageError)
