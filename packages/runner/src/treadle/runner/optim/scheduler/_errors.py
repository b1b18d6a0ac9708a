"""The error of a scheduler argument that MMEngine checks with ``assert``.

MMEngine refuses some arguments (``by_epoch=False`` for ReduceOnPlateau, a bad ``last_step`` or
``epoch_length``, ``eta_min`` with ``eta_min_ratio``) with an AssertionError, and its users'
tests catch that. Treadle raises a ValueError, as for every other bad argument, that is also an
AssertionError, so both ``except ValueError`` and ``except AssertionError`` catch it.
"""

from __future__ import annotations


class SchedulerArgumentError(ValueError, AssertionError):
    """A bad scheduler argument: a ValueError, and the AssertionError MMEngine raises for it.

    Example:
        >>> try:
        ...     raise SchedulerArgumentError('last_step must be >= -1')
        ... except AssertionError as error:
        ...     isinstance(error, ValueError)
        True
    """
