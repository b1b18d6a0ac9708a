"""ImgDataPreprocessor: channel order, normalization, padding and batching of images."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from treadle.runner.registry import MODELS

from ..errors import ModelArgumentError, ModelInputError
from ..utils import stack_batch
from .base import BaseDataPreprocessor

_SWAP_RB = [2, 1, 0]


def _channel_values(name: str, values: Sequence[float] | None) -> torch.Tensor | None:
    if values is None:
        return None
    if isinstance(values, (str, bytes)) or not isinstance(values, (Sequence, torch.Tensor)):
        raise TypeError(
            f"ImgDataPreprocessor: {name} must be a sequence of 1 or 3 numbers, got "
            f"{type(values).__name__}: {values!r}"
        )
    if len(values) not in (1, 3):
        raise ModelArgumentError(
            f"ImgDataPreprocessor: `{name}` should have 1 value (gray, or the same for every "
            f"channel) or 3 values (one per channel), got {len(values)}: {list(values)!r}"
        )
    return torch.as_tensor(values, dtype=torch.float32).view(-1, 1, 1).clone()


def _what(index: int | None) -> str:
    """How an error names the images: ``inputs[i]`` of a list, or the batched tensor."""
    return "data['inputs']" if index is None else f"inputs[{index}]"


@MODELS.register_module()
class ImgDataPreprocessor(BaseDataPreprocessor):
    """Prepare images for a model: move them to its device, swap BGR/RGB, normalize with
    ``mean`` and ``std``, pad to a multiple of ``pad_size_divisor`` and stack them.

    ``data['inputs']`` is either a list of (C, H, W) tensors of any sizes (``pseudo_collate``;
    an (H, W) gray image counts as (1, H, W)),
    padded at the bottom and right to the largest then stacked, or an (N, C, H, W) tensor
    (``default_collate``), padded as a whole. Channels are swapped before the conversion to
    float (cheaper on uint8), normalization comes before padding (the padding keeps
    ``pad_value`` exactly).

    Args:
        mean: per-channel means (1 or 3 values, in the order after any swap); with ``std``.
        std: per-channel standard deviations; both None means no normalization.
        pad_size_divisor: height and width become multiples of it.
        pad_value: the value of padded pixels.
        bgr_to_rgb: reverse the channel order (BGR to RGB).
        rgb_to_bgr: the same swap, named the other way; at most one of the two.
        non_blocking: copy to the device without waiting.

    Example:
        >>> preprocessor = ImgDataPreprocessor(mean=[127.5], std=[127.5], pad_size_divisor=8)
        >>> images = [torch.full((3, 5, 7), 255, dtype=torch.uint8), torch.zeros(3, 6, 4)]
        >>> batch = preprocessor({'inputs': images})
        >>> batch['inputs'].shape, batch['data_samples']
        (torch.Size([2, 3, 8, 8]), None)
    """

    def __init__(
        self,
        mean: Sequence[float | int] | None = None,
        std: Sequence[float | int] | None = None,
        pad_size_divisor: int = 1,
        pad_value: float | int = 0,
        bgr_to_rgb: bool = False,
        rgb_to_bgr: bool = False,
        non_blocking: bool | None = False,
    ) -> None:
        super().__init__(non_blocking)
        if bgr_to_rgb and rgb_to_bgr:
            raise ModelArgumentError(
                "ImgDataPreprocessor: bgr_to_rgb and rgb_to_bgr are both True (`bgr2rgb` and "
                "`rgb2bgr` cannot be set to True at the same time): they are the same swap of "
                "the first and third channel, set only one"
            )
        if (mean is None) != (std is None):
            given, missing = ("mean", "std") if std is None else ("std", "mean")
            raise ModelArgumentError(
                f"ImgDataPreprocessor: {given} is set but {missing} is None; mean and std "
                "should be both set (normalization needs both) or both None"
            )
        if isinstance(pad_size_divisor, bool) or not isinstance(pad_size_divisor, int):
            raise TypeError(
                f"ImgDataPreprocessor: pad_size_divisor must be an int >= 1, got "
                f"{type(pad_size_divisor).__name__}: {pad_size_divisor!r}"
            )
        if pad_size_divisor < 1:
            raise ValueError(
                f"ImgDataPreprocessor: pad_size_divisor must be >= 1, got {pad_size_divisor}"
            )
        mean_tensor = _channel_values("mean", mean)
        std_tensor = _channel_values("std", std)
        self._enable_normalize = mean_tensor is not None
        if mean_tensor is not None:
            # Not persistent: they come from the config, not from training.
            self.register_buffer("mean", mean_tensor, persistent=False)
            self.register_buffer("std", std_tensor, persistent=False)
        self._channel_conversion = bool(bgr_to_rgb or rgb_to_bgr)
        self.pad_size_divisor = pad_size_divisor
        self.pad_value = pad_value

    def forward(self, data: Mapping[str, Any], training: bool = False) -> dict[str, Any]:
        """The batch as a dict: ``inputs`` one float (N, C, H, W) tensor on the device,
        ``data_samples`` as given (None when absent)."""
        if not isinstance(data, Mapping):
            raise TypeError(
                f"ImgDataPreprocessor takes a dict with 'inputs' (and 'data_samples'), got "
                f"{type(data).__name__}; collate the batch into a dict first"
            )
        if "inputs" not in data:
            raise KeyError(
                f"ImgDataPreprocessor: the batch has no 'inputs' key (keys: {sorted(data)})"
            )
        data = self.cast_data(data)
        inputs = data["inputs"]
        if isinstance(inputs, torch.Tensor):
            data["inputs"] = self._batched(inputs)
        elif (
            isinstance(inputs, Sequence)
            and inputs
            and all(isinstance(item, torch.Tensor) for item in inputs)
        ):
            images = [self._one_image(image, index) for index, image in enumerate(inputs)]
            data["inputs"] = stack_batch(images, self.pad_size_divisor, self.pad_value)
        else:
            what = (
                "an empty sequence"
                if isinstance(inputs, Sequence) and not inputs
                else f"{type(inputs).__name__}"
            )
            raise TypeError(
                f"ImgDataPreprocessor: data['inputs'] must be a list of (C, H, W) tensors or an "
                f"(N, C, H, W) tensor, got {what}"
            )
        data.setdefault("data_samples", None)
        return data

    def _check_channels(self, channels: int, given: torch.Tensor, index: int | None) -> None:
        # Runs for every image of every batch: 3 channels return at once, and the message
        # (and the shape in it) is made only when it is raised.
        if channels == 3:
            return
        if self._channel_conversion:
            raise ValueError(
                f"ImgDataPreprocessor: bgr_to_rgb/rgb_to_bgr needs 3 channels, but "
                f"{_what(index)} has shape {tuple(given.shape)}"
            )
        if self._enable_normalize and self.mean.shape[0] == 3:
            raise ModelInputError(
                f"ImgDataPreprocessor: If the mean has 3 values, the input tensor should be "
                f"in shape of (3, H, W) (one value per channel), but {_what(index)} has shape "
                f"{tuple(given.shape)}"
            )

    def _one_image(self, image: torch.Tensor, index: int) -> torch.Tensor:
        given = image
        dims = image.dim()
        if dims == 2:
            # A gray image without its channel dimension, which MMEngine takes too.
            image = image[None]
        elif dims != 3:
            raise ValueError(
                f"ImgDataPreprocessor: each image must be a (C, H, W) tensor or an (H, W) gray "
                f"image, but inputs[{index}] has shape {tuple(image.shape)}"
            )
        self._check_channels(image.size(0), given, index)
        if self._channel_conversion:
            image = image[_SWAP_RB]
        image = image.float()
        if self._enable_normalize:
            image = (image - self.mean) / self.std
        return image

    def _batched(self, inputs: torch.Tensor) -> torch.Tensor:
        if inputs.dim() != 4:
            raise ValueError(
                f"ImgDataPreprocessor: a batched data['inputs'] must be an (N, C, H, W) tensor, "
                f"got shape {tuple(inputs.shape)}; pass a list of (C, H, W) tensors otherwise"
            )
        self._check_channels(inputs.size(1), inputs, None)
        if self._channel_conversion:
            inputs = inputs[:, _SWAP_RB]
        inputs = inputs.float()
        if self._enable_normalize:
            inputs = (inputs - self.mean) / self.std
        height, width = inputs.shape[2:]
        pad_h = math.ceil(height / self.pad_size_divisor) * self.pad_size_divisor - height
        pad_w = math.ceil(width / self.pad_size_divisor) * self.pad_size_divisor - width
        if pad_h or pad_w:
            inputs = F.pad(inputs, (0, pad_w, 0, pad_h), "constant", self.pad_value)
        return inputs
