"""Per-item lists (colours, line widths, font sizes, ...) whose length is not the item count.

MMEngine 0.10.7 answers a list of the wrong length in three ways, which treadle follows, with a
:class:`~treadle.visual.strict_checks.SuspiciousInputWarning`:

- shapes (lines, circles, boxes, polygons) hand the list to a matplotlib collection, which
  ignores extra entries and repeats a shorter list in turn (``"cycle"``);
- texts and masks check the length first: extra entries are ignored, too few are refused
  with an AssertionError (``"at_least"``);
- points hand colours to ``scatter``, which refuses any other length (``"exact"``).

Under :class:`~treadle.visual.strict_checks.StrictChecks` every length but the item count is
refused.
"""

from __future__ import annotations

import itertools
from typing import Literal

from .errors import VisualValueError
from .strict_checks import suspicious

ListRule = Literal["cycle", "at_least", "exact"]


def fit_list(name: str, values: list, count: int, rule: ListRule) -> list:
    """``values`` made ``count`` long by ``rule`` (see the module), warning when it had to be.

    Example:
        >>> fit_list('line_widths', [1, 2], 3, 'cycle')  # doctest: +SKIP
        [1, 2, 1]
    """
    given = len(values)
    if given == count:
        return values
    if given == 0 or rule == "exact" or (given < count and rule == "at_least"):
        raise VisualValueError(_wrong_length(name, given, count, rule))
    if given > count:
        what = f"the last {given - count} are ignored, as in MMEngine"
        fitted = values[:count]
    else:
        what = (
            f"they are repeated in turn (item i takes entry i mod {given}), as MMEngine's "
            "matplotlib collections do"
        )
        fitted = list(itertools.islice(itertools.cycle(values), count))
    suspicious(
        VisualValueError(_wrong_length(name, given, count, rule)),
        f"{name} has {given} entries for {count} items to draw: {what}",
    )
    return fitted


def _wrong_length(name: str, given: int, count: int, rule: ListRule) -> str:
    message = (
        f"{name} has {given} entries but there are {count} items to draw; give one value, or a "
        "list with one value per item"
    )
    if rule == "at_least" and 0 < given < count:
        # MMEngine's words (its check_length), which code written for it may match on.
        message += (
            f" (The length of {name} must equal with or greater than {count}, but got {given})"
        )
    elif rule == "exact" and given:
        message += (
            f" (matplotlib's words: 'c' argument has {given} elements, which is inconsistent "
            f"with 'x' and 'y' with size {count})"
        )
    return message
