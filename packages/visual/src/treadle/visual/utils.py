"""MMEngine's ``mmengine.visualization.utils`` helpers, for code that calls them directly
(toolbox visualizers draw with them): argument checks, colour conversion, feature-map heatmaps
and reading the pixels of a matplotlib canvas.

Example:
    >>> from treadle.visual.utils import color_val_matplotlib, value2list
    >>> color_val_matplotlib((255, 0, 0))
    (1.0, 0.0, 0.0)
    >>> value2list('r', str, 2)
    ['r', 'r']
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .colors import to_rgb


def check_type(name: str, value: Any, valid_type: type | tuple[type, ...]) -> None:
    """Raise TypeError naming ``name`` when ``value`` is not a ``valid_type``.

    Example:
        >>> check_type('thickness', 2, (int, float))
    """
    if not isinstance(value, valid_type):
        raise TypeError(f"`{name}` should be {valid_type}, but got {type(value)}")


def check_length(name: str, value: Any, valid_length: int) -> None:
    """Raise AssertionError (as MMEngine does) when ``value`` is a list shorter than
    ``valid_length``; other values pass.

    Example:
        >>> check_length('colors', ['r', 'g'], 2)
    """
    if isinstance(value, list) and len(value) < valid_length:
        raise AssertionError(
            f"The length of {name} must equal with or greater than {valid_length}, "
            f"but got {len(value)}"
        )


def check_type_and_length(
    name: str, value: Any, valid_type: type | tuple[type, ...], valid_length: int
) -> None:
    """:func:`check_type` then :func:`check_length`.

    Example:
        >>> check_type_and_length('colors', ['r'], (str, list), 1)
    """
    check_type(name, value, valid_type)
    check_length(name, value, valid_length)


def value2list(value: Any, valid_type: type | tuple[type, ...], expand_dim: int) -> list[Any]:
    """``[value] * expand_dim`` when ``value`` is a ``valid_type``; otherwise ``value``.

    Example:
        >>> value2list([1, 2], int, 3)
        [1, 2]
    """
    if isinstance(value, valid_type):
        return [value] * expand_dim
    return value


def color_str2rgb(color: str) -> tuple[int, int, int]:
    """A matplotlib colour name as (R, G, B) integers in 0-255 (alpha dropped).

    Example:
        >>> color_str2rgb('red')
        (255, 0, 0)
    """
    rgb = to_rgb(color)
    return tuple(round(c * 255) for c in rgb)  # type: ignore[return-value, union-attr]


def color_val_matplotlib(colors: Any) -> Any:
    """Colours as matplotlib takes them: an (R, G, B) tuple in 0-255 becomes floats in 0-1, a
    name stays as it is, a list is converted item by item.

    Example:
        >>> color_val_matplotlib(['g', (0, 0, 255)])
        ['g', (0.0, 0.0, 1.0)]
    """
    if isinstance(colors, str):
        return colors
    if isinstance(colors, tuple):
        return to_rgb(colors, name="colors")
    if isinstance(colors, list):
        return [color_val_matplotlib(color) for color in colors]
    raise TypeError(f"colors must be a str, an (R, G, B) tuple or a list, got {type(colors)}")


def tensor2ndarray(value: Any) -> Any:
    """A torch tensor as a numpy array (moved to the CPU); anything else as it is.

    Example:
        >>> tensor2ndarray([1, 2])
        [1, 2]
    """
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    return value


def convert_overlay_heatmap(
    feat_map: Any, img: np.ndarray | None = None, alpha: float = 0.5
) -> np.ndarray:
    """A feature map (H, W), or (1, H, W) / (H, W, 1), as an RGB uint8 JET heatmap, blended into
    ``img`` (RGB, same size) with weight ``alpha`` when given.

    Example:
        >>> convert_overlay_heatmap(np.eye(3, dtype=np.float32)).shape
        (3, 3, 3)
    """
    from .featmap import _overlay

    values = np.asarray(tensor2ndarray(feat_map), dtype=np.float32)
    if values.ndim == 3 and 1 in (values.shape[0], values.shape[-1]):
        values = values.reshape(values.shape[1:] if values.shape[0] == 1 else values.shape[:2])
    if values.ndim != 2:
        raise ValueError(f"feat_map must be (H, W) or have one channel, got {values.shape}")
    if img is not None and img.shape[:2] != values.shape:
        raise ValueError(
            f"img is {img.shape[:2]} and feat_map {values.shape}: resize one to the other first"
        )
    return _overlay(values, img, alpha)


def img_from_canvas(canvas: Any) -> np.ndarray:
    """The pixels of a matplotlib Agg canvas, RGB uint8 (H, W, 3), rendered first.

    The figure is drawn on every call, as MMEngine's does: a canvas drawn on since its last
    render, or never rendered at all, gives what its figure holds now.

    Example:
        >>> from matplotlib.backends.backend_agg import FigureCanvasAgg
        >>> from matplotlib.figure import Figure
        >>> canvas = FigureCanvasAgg(Figure(figsize=(2, 1), dpi=10))
        >>> img_from_canvas(canvas).shape
        (10, 20, 3)
    """
    canvas.draw()
    rgba = np.asarray(canvas.buffer_rgba())
    return rgba[..., :3].copy()


def wait_continue(figure: Any, timeout: float = 0, continue_key: str = " ") -> int:
    """Show ``figure`` and wait ``timeout`` seconds (0: until ``continue_key`` is pressed or the
    window is closed). Returns 1 when the window was closed, else 0; on a non-interactive
    (headless) matplotlib backend it returns 0 at once.

    Example:
        >>> wait_continue(None)  # headless: nothing to wait for
        0
    """
    import matplotlib.pyplot as plt

    from .show import _is_interactive, _wait

    if figure is None or not _is_interactive(plt.get_backend().lower()):
        return 0
    if figure.canvas.manager is not None:
        figure.show()  # open the window, if it is not open yet
    _wait(figure, timeout, continue_key)
    return 0 if plt.fignum_exists(figure.number) else 1


__all__ = [
    "check_length",
    "check_type",
    "check_type_and_length",
    "color_str2rgb",
    "color_val_matplotlib",
    "convert_overlay_heatmap",
    "img_from_canvas",
    "tensor2ndarray",
    "value2list",
    "wait_continue",
]
