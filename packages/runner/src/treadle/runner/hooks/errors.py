"""The errors of hooks where MMEngine checks with ``assert``.

MMEngine's hooks assert on their arguments and on what they read from the runner
(``optim_wrapper.get_lr()`` must return a dict), and its users' tests, which often stand a
MagicMock in for the runner or its optimizer wrapper, catch AssertionError. Treadle raises the
TypeError or ValueError that says what is wrong, as a class that is also an AssertionError.
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


class HookArgumentTypeError(TypeError, AssertionError):
    """A hook argument of the wrong type, where MMEngine asserts (``save_best`` given as a dict,
    ``rule=1``).

    Example:
        >>> try:
        ...     raise HookArgumentTypeError('"save_best" should be a str, got dict')
        ... except AssertionError as error:
        ...     isinstance(error, TypeError)
        True
    """


class HookArgumentError(ValueError, AssertionError):
    """A hook argument of the right type but a value that cannot work, where MMEngine asserts
    (``save_best=['auto', 'acc']``, one ``rule`` too many).

    Example:
        >>> try:
        ...     raise HookArgumentError('Number of "rule" must be 1 or 2, got 3')
        ... except AssertionError as error:
        ...     isinstance(error, ValueError)
        True
    """
