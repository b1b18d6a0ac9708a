"""The pieces both cosine families share: the floor (``eta_min`` or ``eta_min_ratio``, given
absolutely or as a fraction of each group's base value) and one chainable step along a cosine."""

from __future__ import annotations

import math


def check_eta_min(eta_min: float | None, eta_min_ratio: float | None, owner: str) -> None:
    """SchedulerArgumentError naming ``owner`` unless exactly one of the two is given."""
    if (eta_min is None) == (eta_min_ratio is None):
        from ._errors import SchedulerArgumentError

        raise SchedulerArgumentError(
            f"{owner}: either `eta_min` or `eta_min_ratio should be specified, not both nor "
            f"neither; got eta_min={eta_min!r}, eta_min_ratio={eta_min_ratio!r}"
        )


def eta_min_of(base_value: float, eta_min: float | None, eta_min_ratio: float | None) -> float:
    """The floor for a group whose base value is ``base_value``."""
    if eta_min_ratio is None:
        return eta_min  # type: ignore[return-value]
    return base_value * eta_min_ratio


def cosine_step(value: float, floor: float, step: int, period: int) -> float:
    """The value at ``step`` of a half cosine of ``period`` steps, from ``value`` at ``step - 1``.

    Recursive (it scales the distance to ``floor`` by the ratio of two consecutive cosine
    points), so another scheduler may have changed ``value`` in between.
    """
    ratio = (1 + math.cos(math.pi * step / period)) / (1 + math.cos(math.pi * (step - 1) / period))
    return ratio * (value - floor) + floor
