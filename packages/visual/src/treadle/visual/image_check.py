"""Check the images users hand to ``set_image`` and ``add_image``.

Every drawing and every backend takes RGB uint8 arrays of shape (H, W, 3). Wrong input is
refused here, with its name, shape and dtype in the message, instead of surfacing later as a
matplotlib or tracker error about something the user never wrote.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np


def check_image(image: Any, name: str = "image") -> np.ndarray:
    """Return ``image`` as a C-contiguous uint8 array of shape (H, W, 3).

    Accepted: numpy arrays of shape (H, W) (grey, repeated to three channels), (H, W, 3), or
    (H, W, 4) (alpha dropped), of an integer or float dtype with values in [0, 255]. Floats
    are truncated to uint8 as MMEngine does; a float image whose values all lie in [0, 1]
    draws almost black, so it gets a warning that says to scale it.

    Example:
        >>> check_image(np.zeros((4, 6), dtype=np.uint8)).shape
        (4, 6, 3)
    """
    if not isinstance(image, np.ndarray):
        raise TypeError(
            f"{name} must be a numpy array of shape (H, W, 3), got {type(image).__name__}"
            + (" (convert a tensor with .cpu().numpy())" if hasattr(image, "numpy") else "")
        )
    if image.ndim == 3 and image.shape[2] in (3, 4):
        image = image[..., :3]
    elif image.ndim != 2:
        raise ValueError(
            f"{name} must have shape (H, W, 3) (RGB), (H, W, 4) or (H, W), got shape "
            f"{image.shape}" + _channel_first_hint(image)
        )
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {image.shape}")
    kind = image.dtype.kind
    if kind not in "uif":  # bool, complex, object, strings: no meaningful pixel values
        raise TypeError(
            f"{name} must have an integer or float dtype with values in [0, 255], got dtype "
            f"{image.dtype}"
        )
    if kind != "u" or image.dtype != np.uint8:
        low, high = float(image.min()), float(image.max())
        if np.isnan(low) or low < 0 or high > 255:
            raise ValueError(
                f"{name} has values in [{low:g}, {high:g}]; pixel values must lie in [0, 255] "
                f"(dtype {image.dtype})"
            )
        if kind == "f" and 0 < high <= 1:
            warnings.warn(
                f"{name} is a float image with values in [0, 1]; it is cast to uint8 (0-255), "
                "which draws it almost black. Multiply it by 255 first.",
                stacklevel=3,
            )
        image = image.astype(np.uint8)
    if image.ndim == 2:
        image = np.repeat(image[:, :, None], 3, axis=2)
    return np.ascontiguousarray(image)


def _channel_first_hint(image: np.ndarray) -> str:
    if image.ndim == 3 and image.shape[0] in (1, 3, 4) and image.shape[2] not in (1, 3, 4):
        return "; it looks channel-first (C, H, W): use image.transpose(1, 2, 0)"
    return ""
