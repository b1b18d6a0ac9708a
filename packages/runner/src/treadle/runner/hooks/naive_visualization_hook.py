"""``NaiveVisualizationHook``: draws each test image with its prediction through the
visualizer."""

from __future__ import annotations

import os.path as osp
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

from ..registry import HOOKS
from .hook import DATA_BATCH, Hook


class InputImageError(ValueError, AssertionError):
    """An input that is not an image tensor, where MMEngine's ``tensor2imgs`` asserts.

    Example:
        >>> isinstance(InputImageError('an input image must be CHW or NCHW'), AssertionError)
        True
    """


def tensor_to_image(tensor: torch.Tensor, img_norm_cfg: dict | None = None) -> np.ndarray:
    """A CHW image tensor (normalized with ``img_norm_cfg``'s ``mean``/``std``) back to an HWC
    uint8 array, with a 3-channel image's first and last channels swapped unless
    ``img_norm_cfg`` says ``to_bgr=False``, as MMEngine's ``tensor2imgs`` does (its
    ``to_bgr`` defaults to True: an RGB input is handed on as BGR). mmcv's ``to_rgb`` key is
    read the same way when ``to_bgr`` is absent; a grey image is never swapped.

    An NCHW tensor (what a per-sample dict holds in MMEngine's own tests) gives its first
    image, as MMEngine's hook does; with more than one image it also warns that the others
    are not drawn.

    Example:
        >>> tensor_to_image(torch.zeros(3, 2, 4), dict(mean=[128] * 3, std=[1] * 3)).shape
        (2, 4, 3)
        >>> tensor_to_image(torch.zeros(1, 3, 2, 4)).shape
        (2, 4, 3)
        >>> red = torch.zeros(3, 1, 1)
        >>> red[0] = 255
        >>> tensor_to_image(red)[0, 0].tolist()  # as BGR, by default
        [0, 0, 255]
        >>> tensor_to_image(red, dict(to_bgr=False))[0, 0].tolist()
        [255, 0, 0]
    """
    if tensor.dim() == 4:
        if len(tensor) > 1:
            warnings.warn(
                f"NaiveVisualizationHook: an input holds {len(tensor)} images (NCHW shape "
                f"{tuple(tensor.shape)}); only the first is drawn, as in MMEngine",
                UserWarning,
                stacklevel=3,
            )
        tensor = tensor[0]
    if tensor.dim() != 3:
        raise InputImageError(
            f"NaiveVisualizationHook: an input image must be a CHW tensor (or NCHW, of which "
            f"the first image is drawn), got shape {tuple(tensor.shape)}"
        )
    image = tensor.detach().float().cpu().permute(1, 2, 0).numpy()
    cfg = img_norm_cfg or {}
    channels = image.shape[2]
    std = np.asarray(cfg.get("std", [1.0] * channels), dtype=np.float32)
    mean = np.asarray(cfg.get("mean", [0.0] * channels), dtype=np.float32)
    image = image * std + mean
    # MMEngine's tensor2imgs swaps unless told to_bgr=False; mmcv's configs say to_rgb.
    if cfg.get("to_bgr", cfg.get("to_rgb", True)) and channels == 3:
        image = image[..., ::-1]
    return np.ascontiguousarray(np.clip(image, 0, 255).astype(np.uint8))


def _get(sample: Any, key: str, default: Any = None) -> Any:
    if isinstance(sample, dict):
        return sample.get(key, default)
    getter = getattr(sample, "get", None)
    return getter(key, default) if getter is not None else getattr(sample, key, default)


def _pairs(data_batch: Any) -> Iterator[tuple[Any, Any]]:
    """(input image, data sample) for each sample of the batch: a collated dict
    (``inputs``, ``data_samples``) or a list of per-sample dicts (``inputs``, ``data_sample``)."""
    if isinstance(data_batch, dict):
        inputs = data_batch.get("inputs")
        samples = data_batch.get("data_samples") or [None] * len(inputs)
        yield from zip(inputs, samples, strict=False)
    else:
        for item in data_batch:
            sample = item.get("data_samples", item.get("data_sample"))
            yield item["inputs"], sample


@HOOKS.register_module()
class NaiveVisualizationHook(Hook):
    """Every ``interval`` test iterations, turns each input image back into pixels (undoing
    the normalization in the sample's ``img_norm_cfg`` and any padding), resizes it to the
    sample's ``ori_shape`` and calls ``runner.visualizer.add_datasample`` with the sample and
    its prediction. Before training it records the model graph (``add_graph``) in backends that
    support it.

    Args:
        interval: visualize every ``interval`` test batches.
        draw_gt: draw the ground truth.
        draw_pred: draw the prediction.

    Example:
        >>> runner_cfg = dict(custom_hooks=[dict(type='NaiveVisualizationHook', interval=10)])
    """

    priority = "NORMAL"

    def __init__(self, interval: int = 1, draw_gt: bool = True, draw_pred: bool = True) -> None:
        if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
            raise ValueError(
                f"NaiveVisualizationHook: interval must be a positive int, got {interval!r}"
            )
        self._interval = interval
        self.draw_gt = draw_gt
        self.draw_pred = draw_pred

    def _unpad(self, image: np.ndarray, unpad_shape: tuple[int, int]) -> np.ndarray:
        """The top-left ``(width, height)`` of ``image``: what was there before padding."""
        width, height = unpad_shape
        return image[:height, :width]

    def before_train(self, runner: Any) -> None:
        runner.visualizer.add_graph(runner.model, None)

    def after_test_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: Sequence | None = None,
    ) -> None:
        if data_batch is None or not self.every_n_inner_iters(batch_idx, self._interval):
            return
        from PIL import Image

        predictions = list(outputs) if outputs is not None else []
        for index, (inputs, sample) in enumerate(_pairs(data_batch)):
            image = tensor_to_image(inputs, _get(sample, "img_norm_cfg"))
            ori_shape = _get(sample, "ori_shape")  # (height, width), as datasets store it
            if ori_shape is None:
                ori_shape = (_get(sample, "ori_height"), _get(sample, "ori_width"))
            if ori_shape[0] is not None:
                size = (int(ori_shape[1]), int(ori_shape[0]))
                if _get(sample, "pad_shape") is not None:
                    image = self._unpad(image, _get(sample, "scale", size))
                if (image.shape[1], image.shape[0]) != size:
                    squeezed = image[..., 0] if image.shape[2] == 1 else image
                    image = np.asarray(Image.fromarray(squeezed).resize(size))
            path = _get(sample, "img_path")
            name = osp.basename(path) if path else f"test_{batch_idx}_{index}"
            output = predictions[index] if index < len(predictions) else None
            runner.visualizer.add_datasample(
                name,
                image,
                output if output is not None else sample,
                self.draw_gt,
                self.draw_pred,
                step=runner.iter,
            )
