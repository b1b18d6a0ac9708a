"""Hook priorities: MMEngine's names and numbers (a lower number runs earlier)."""

from __future__ import annotations

from enum import Enum


class Priority(Enum):
    """The named priority levels of hooks; hooks with a lower value are called first.

    Example:
        >>> Priority.VERY_HIGH.value, Priority['LOWEST'].value
        (10, 100)
    """

    HIGHEST = 0
    VERY_HIGH = 10
    HIGH = 30
    ABOVE_NORMAL = 40
    NORMAL = 50
    BELOW_NORMAL = 60
    LOW = 70
    VERY_LOW = 90
    LOWEST = 100


def get_priority(priority: int | str | Priority) -> int:
    """The number of ``priority``: an int in [0, 100], a level name (any case) or a ``Priority``.

    Example:
        >>> get_priority('very_low'), get_priority(Priority.HIGH), get_priority(42)
        (90, 30, 42)
    """
    # bool is an int subclass, but `priority=True` is a mistake, not level 1.
    if isinstance(priority, int) and not isinstance(priority, bool):
        if not 0 <= priority <= 100:
            raise ValueError(f"a hook priority must be between 0 and 100, got {priority}")
        return priority
    if isinstance(priority, Priority):
        return priority.value
    if isinstance(priority, str):
        try:
            return Priority[priority.upper()].value
        except KeyError:
            names = ", ".join(level.name for level in Priority)
            raise ValueError(
                f"unknown hook priority {priority!r}; the levels are {names}"
            ) from None
    raise TypeError(
        f"a hook priority must be an integer or Priority enum value (or a level name such as "
        f"'NORMAL'), got {type(priority).__name__}: {priority!r}"
    )
