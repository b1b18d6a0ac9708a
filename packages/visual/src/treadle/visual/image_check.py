"""Check the images users hand to ``set_image`` and ``add_image``.

Every drawing and every backend takes RGB uint8 arrays of shape (H, W, 3). Input that cannot be
an image is refused here, with its name, shape and dtype in the message, instead of surfacing
later as a matplotlib or tracker error about something the user never wrote; pixel values are
cast to uint8 the way MMEngine casts them, with a warning where that changes them.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .errors import VisualTypeError
from .strict_checks import suspicious


def check_image(image: Any, name: str = "image") -> np.ndarray:
    """Return ``image`` as a C-contiguous uint8 array of shape (H, W, 3).

    Accepted: numpy arrays of shape (H, W) or (H, W, 1) (grey, repeated to three channels),
    (H, W, 3), or (H, W, 4) (alpha dropped), of an integer, float or bool dtype. Anything but
    an array (None included) raises an error that is both a TypeError and MMEngine's
    AssertionError. Values are cast to uint8 as MMEngine's ``astype('uint8')`` casts them:
    floats are truncated; values outside 0-255 wrap around (300 becomes 44) and bool images
    become 0 and 1, each with a :class:`~.strict_checks.SuspiciousInputWarning` (refused under
    strict checks); a float image whose values all lie in [0, 1] draws almost black, so it
    gets a warning that says to scale it.

    Example:
        >>> check_image(np.zeros((4, 6), dtype=np.uint8)).shape
        (4, 6, 3)
    """
    if not isinstance(image, np.ndarray):
        raise VisualTypeError(
            f"{name} must be a numpy array of shape (H, W, 3), got {type(image).__name__}"
            + (" (convert a tensor with .cpu().numpy())" if hasattr(image, "numpy") else "")
        )
    if image.ndim == 3 and image.shape[2] in (3, 4):
        image = image[..., :3]
    elif image.ndim == 3 and image.shape[2] == 1:
        image = image[..., 0]
    elif image.ndim != 2:
        raise ValueError(
            f"{name} must have shape (H, W, 3) (RGB), (H, W, 4), (H, W, 1) or (H, W), got shape "
            f"{image.shape}" + _channel_first_hint(image)
        )
    if image.shape[0] == 0 or image.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {image.shape}")
    kind = image.dtype.kind
    if kind == "b":
        suspicious(
            VisualTypeError(
                f"{name} must have an integer or float dtype with values in [0, 255], got dtype "
                f"{image.dtype}"
            ),
            f"{name} has dtype bool: True and False are drawn as the pixel values 1 and 0 "
            "(almost black), as MMEngine's astype('uint8') does; for white and black, pass "
            "image.astype(np.uint8) * 255",
        )
        image = image.astype(np.uint8)
        kind = "u"
    if kind not in "uif":  # complex, object, strings: no meaningful pixel values
        raise TypeError(
            f"{name} must have an integer or float dtype with values in [0, 255], got dtype "
            f"{image.dtype}"
        )
    if kind != "u" or image.dtype != np.uint8:
        low, high, non_finite = _value_range(image)
        if non_finite or low < 0 or high > 255:
            image = _wrapped(image, name, low, high, non_finite)
        else:
            if kind == "f" and 0 < high <= 1:
                warnings.warn(
                    f"{name} is a float image with values in [0, 1]; it is cast to uint8 "
                    "(0-255), which draws it almost black. Multiply it by 255 first.",
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


def _value_range(image: np.ndarray) -> tuple[float, float, bool]:
    """The lowest and highest finite values, and whether any value is NaN or infinite."""
    if image.dtype.kind != "f":
        return float(image.min()), float(image.max()), False
    finite = np.isfinite(image)
    if finite.all():
        return float(image.min()), float(image.max()), False
    values = image[finite]
    if not values.size:
        return 0.0, 0.0, True
    return float(values.min()), float(values.max()), True


def _wrapped(image: np.ndarray, name: str, low: float, high: float, non_finite: bool) -> np.ndarray:
    """``image`` cast to uint8 as MMEngine's ``astype('uint8')`` does on x86, where values wrap
    around (300 becomes 44, -5 becomes 251; floats are truncated first, NaN and infinities become
    0), done the same way on every platform; with a warning (strict checks: refused)."""
    shown = f"[{low:g}, {high:g}]" + (" and NaN or infinities" if non_finite else "")
    suspicious(
        ValueError(
            f"{name} has values in {shown}; pixel values must lie in [0, 255] (dtype {image.dtype})"
        ),
        f"{name} has values in {shown}, outside 0-255 (dtype {image.dtype}): they wrap around "
        "as MMEngine's astype('uint8') makes them (300 becomes 44, -5 becomes 251, NaN 0); "
        "clip or scale the image to 0-255 first",
    )
    if image.dtype.kind == "f":
        finite = np.where(np.isfinite(image), np.trunc(image), 0)
        # Beyond int64 there is nothing sensible to wrap: those become 0 too.
        integral = np.where(np.abs(finite) < 2.0**63, finite, 0).astype(np.int64)
    else:
        integral = image.astype(np.int64, copy=False)
    return (integral & 0xFF).astype(np.uint8)
