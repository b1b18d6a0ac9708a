"""The error of a hook that finds the runner in a state MMEngine checks with ``assert``.

MMEngine's hooks assert on what they read from the runner (``optim_wrapper.get_lr()`` must
return a dict), and its users' tests, which often stand a MagicMock in for the runner or its
optimizer wrapper, catch AssertionError. Treadle raises a TypeError that is also one.
"""

from __future__ import annotations


class RunnerStateTypeError(TypeError, AssertionError):
    """Something a hook read from the runner has the wrong type, where MMEngine asserts.

    Example:
        >>> try:
        ...     raise RunnerStateTypeError('get_lr() should return a dict, got MagicMock')
        ... except AssertionError as error:
        ...     isinstance(error, TypeError)
        True
    """
