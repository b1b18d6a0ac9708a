"""Colours as users write them for the Visualizer: names, RGB tuples, or one per item.

MMEngine's convention is kept: a ``str`` is a matplotlib colour ('g', 'red', '#ff8800'), a
``tuple`` is (R, G, B) with values in 0-255, and a ``list`` gives one colour per drawn item.
Everything is resolved here, when the drawing call is made, so a typo is reported with the
argument that holds it instead of as a matplotlib error at render time.
"""

from __future__ import annotations

import difflib
import numbers
from typing import Any

from .errors import VisualValueError
from .item_lists import ListRule, fit_list

Color = str | tuple
RGB = tuple[float, float, float]

NO_COLOR = "none"


def to_rgb(color: Any, name: str = "color", allow_none: bool = False) -> RGB | None:
    """One colour as an (r, g, b) tuple of floats in [0, 1]; ``None`` for 'none' if allowed.

    Example:
        >>> to_rgb((255, 0, 0))
        (1.0, 0.0, 0.0)
        >>> to_rgb('g')
        (0.0, 0.5, 0.0)
    """
    if isinstance(color, str):
        # Imported here, not with the module: the Visualizer imports this module, and a run
        # that never draws must not pay for matplotlib's import.
        from matplotlib import colors as mcolors

        if color.lower() == NO_COLOR:
            if allow_none:
                return None
            raise ValueError(f"{name} cannot be 'none' here")
        try:
            return tuple(float(c) for c in mcolors.to_rgb(color))  # type: ignore[return-value]
        except ValueError:
            raise ValueError(_unknown_name_message(name, color)) from None
    if isinstance(color, tuple):
        # MMEngine asserts both: the errors are AssertionErrors too.
        if len(color) != 3 or not all(isinstance(c, numbers.Real) for c in color):
            raise VisualValueError(f"{name} {color!r} must be an (R, G, B) tuple of three numbers")
        if not all(0 <= c <= 255 for c in color):
            raise VisualValueError(f"{name} {color!r} must have values in 0-255 (RGB order)")
        return tuple(float(c) / 255 for c in color)  # type: ignore[return-value]
    raise TypeError(
        f"{name} must be a colour name (str) or an (R, G, B) tuple in 0-255, "
        f"got {type(color).__name__}: {color!r}"
    )


def colors_per_item(
    colors: Any,
    count: int,
    name: str = "colors",
    allow_none: bool = False,
    rule: ListRule = "at_least",
) -> list[RGB | None]:
    """Resolve ``colors`` (one colour or a list of ``count``) into ``count`` RGB tuples.

    A list of another length follows ``rule`` (:func:`.item_lists.fit_list`: extra colours
    ignored, a shorter list repeated for shapes, with a warning).

    Example:
        >>> colors_per_item(['r', (0, 0, 255)], 2)
        [(1.0, 0.0, 0.0), (0.0, 0.0, 1.0)]
    """
    if isinstance(colors, list):
        colors = fit_list(name, colors, count, rule)
        return [to_rgb(c, f"{name}[{i}]", allow_none) for i, c in enumerate(colors)]
    return [to_rgb(colors, name, allow_none)] * count


def _unknown_name_message(name: str, color: str) -> str:
    from matplotlib import colors as mcolors

    known = list(mcolors.get_named_colors_mapping())
    close = difflib.get_close_matches(color.lower(), known, n=3)
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return (
        f"{name}: unknown colour {color!r}. Use a matplotlib colour name ('g', 'red', "
        f"'tab:blue'), a hex string ('#ff8800') or an (R, G, B) tuple in 0-255.{hint}"
    )
