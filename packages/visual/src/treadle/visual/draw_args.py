"""Check the arguments of the ``draw_*`` methods and bring them into one form.

Each check names the argument, the shape or length it expects and what it got, so that a
wrong call fails where it is made rather than inside matplotlib.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

from .errors import VisualValueError
from .item_lists import ListRule, fit_list
from .mmengine_checks import MMEngineChecks
from .strict_checks import suspicious


def as_array(name: str, value: Any) -> np.ndarray:
    """``value`` (a numpy array, a torch tensor or a nested list) as a float numpy array.

    Tensors are recognised by duck typing, so drawing never imports torch.
    """
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu().numpy()
    if isinstance(value, (str, bytes, dict)) or value is None:
        raise TypeError(
            f"{name} must be a numpy array or a torch tensor, got {type(value).__name__}"
        )
    array = np.asarray(value)
    if array.dtype.kind == "O":
        # An object array of numbers (MMEngine hands such arrays to matplotlib as they are).
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must hold numbers, got an object array") from None
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {array.dtype}")
    return array.astype(np.float64, copy=False)


def as_rows(name: str, value: Any, columns: int, meaning: str) -> np.ndarray:
    """An (N, columns) array; one row of shape (columns,) is accepted as N = 1."""
    array = as_array(name, value)
    if array.size == 0:
        # Nothing to draw (a model that predicts no boxes gives shape (0,) as often as (0, 4)).
        return array.reshape(0, columns)
    if array.ndim == 1:
        array = array[None]
    if array.ndim != 2 or array.shape[1] != columns:
        raise VisualValueError(
            f"{name} must have shape (N, {columns}) ({meaning}) or ({columns},), "
            f"got shape {tuple(np.shape(value))}"
        )
    return array


def per_item(
    name: str,
    value: Any,
    count: int,
    item_types: tuple[type, ...],
    rule: ListRule = "at_least",
) -> list:
    """Broadcast one value to ``count`` items, or fit a list to them by ``rule``
    (:func:`.item_lists.fit_list`: one entry per item; else extra entries ignored and, for
    shapes, a shorter list repeated, with a warning)."""
    if isinstance(value, list):
        value = fit_list(name, value, count, rule)
        for index, item in enumerate(value):
            _check_type(f"{name}[{index}]", item, item_types)
        return value
    _check_type(name, value, item_types)
    return [value] * count


def per_item_numbers(name: str, value: Any, count: int, rule: ListRule = "at_least") -> list[float]:
    """Like :func:`per_item` for numbers (line widths, font sizes, alphas)."""
    if isinstance(value, np.ndarray) or (hasattr(value, "detach") and hasattr(value, "cpu")):
        value = as_array(name, value).reshape(-1).tolist()
    values = per_item(name, value, count, (numbers.Real,), rule)
    return [float(v) for v in values]


def alpha_value(name: str, alpha: Any) -> float:
    """An opacity in [0, 1]: shapes are matplotlib collections, which refuse any other (under
    MMEngine too, with the words this error ends with)."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise ValueError(f"{name} must be a number in [0, 1], got {alpha!r}")
    if not 0 <= alpha <= 1:
        raise ValueError(
            f"{name} must be a number in [0, 1], got {alpha!r} (matplotlib's words, which "
            f"MMEngine shows: alpha ({alpha!r}) is outside 0-1 range)"
        )
    return float(alpha)


def blend_weight(name: str, alpha: Any) -> float:
    """The weight of a colour blended into pixels (masks, feature maps): any number, as in
    MMEngine, whose ``cv2.addWeighted`` extrapolates past [0, 1] and clips the result to
    0-255; outside [0, 1] it warns (strict checks: refused)."""
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or alpha != alpha:
        raise ValueError(f"{name} must be a number in [0, 1], got {alpha!r}")
    if not 0 <= alpha <= 1:
        suspicious(
            ValueError(f"{name} must be a number in [0, 1], got {alpha!r}"),
            f"{name} is {alpha!r}, outside [0, 1]: the blend is extrapolated (colour weighted "
            f"{alpha!r}, pixels {1 - alpha!r}) and clipped to 0-255, as MMEngine's "
            "cv2.addWeighted does",
        )
    return float(alpha)


def warn_outside(
    what: str, points: np.ndarray, width: int, height: int, noun: str, stacklevel: int = 3
) -> None:
    """Warn (not fail, as MMEngine does) when any (x, y) in ``points`` lies outside the image.

    ``points`` has shape (N, K, 2): K corners of each of the N items. Coordinates are
    continuous, so x == width (the right edge of the last column) is still inside. The message
    ends with MMEngine's sentence for the shape (``noun``: 'bbox', 'text', ...), which code
    written for MMEngine filters or matches on.
    """
    if points.size == 0:
        return
    finite = warn_non_finite(what, points, stacklevel + 1)
    x, y = points[..., 0], points[..., 1]
    outside = ((x < 0) | (x > width) | (y < 0) | (y > height)).reshape(len(points), -1)
    # Items with an infinite coordinate were reported as not drawn, not as outside.
    outside = outside.any(axis=1) & finite
    if not outside.any():
        return
    first = int(np.flatnonzero(outside)[0])
    corners = np.round(points[first], 2).tolist()
    warnings.warn(
        f"{int(outside.sum())} of {len(points)} {what} lie partly outside the image "
        f"(width {width}, height {height}); the first is {what}[{first}] with points "
        f"{corners}. They are drawn clipped to the image. (MMEngine's words: Warning: The "
        f"{noun} is out of bounds, the drawn {noun} may not be in the image)",
        UserWarning,
        stacklevel=stacklevel,
    )


def warn_non_finite(what: str, points: np.ndarray, stacklevel: int) -> np.ndarray:
    """Warn when items have NaN or infinite coordinates (a diverging model predicts them).

    matplotlib leaves such items out; the warning says which, so that a missing drawing is not
    a mystery. Returns which items are finite.
    """
    finite = np.isfinite(points).reshape(len(points), -1).all(axis=1)
    bad = ~finite
    if not bad.any():
        return finite
    first = int(np.flatnonzero(bad)[0])
    warnings.warn(
        f"{int(bad.sum())} of {len(points)} {what} have NaN or infinite coordinates and are not "
        f"drawn; the first is {what}[{first}] with points {points[first].tolist()}",
        UserWarning,
        stacklevel=stacklevel,
    )
    return finite


def warn_flipped(boxes: np.ndarray, stacklevel: int = 3) -> None:
    """Warn about boxes with x1 > x2 or y1 > y2; they are drawn as the rectangle they span.

    Under MMEngine's checks (treadle.compat) they are refused, as MMEngine's assertion does.
    """
    flipped = (boxes[:, 2] < boxes[:, 0]) | (boxes[:, 3] < boxes[:, 1])
    if not flipped.any():
        return
    index = int(np.flatnonzero(flipped)[0])
    if MMEngineChecks.enabled:
        raise VisualValueError(
            f"bboxes must have x1 <= x2 and y1 <= y2 (bboxes are x1, y1, x2, y2): "
            f"bboxes[{index}] = {boxes[index].tolist()} (MMEngine's check, on under "
            "treadle.compat; treadle alone draws such a box with a warning)"
        )
    warnings.warn(
        f"{int(flipped.sum())} of {len(boxes)} bboxes have x1 > x2 or y1 > y2 (bboxes are "
        f"x1, y1, x2, y2); the first is bboxes[{index}] = {boxes[index].tolist()}. They are "
        f"drawn as the rectangle between the two corners.",
        UserWarning,
        stacklevel=stacklevel,
    )


_TYPE_NAMES = {numbers.Real: "a number", str: "a str", dict: "a dict", tuple: "a tuple"}


def _check_type(name: str, value: Any, item_types: tuple[type, ...]) -> None:
    if isinstance(value, bool) and bool not in item_types:
        raise TypeError(f"{name} must not be a bool, got {value!r}")
    if not isinstance(value, item_types):
        expected = " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in item_types)
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__}: {value!r}")
