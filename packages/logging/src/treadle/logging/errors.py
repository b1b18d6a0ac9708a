"""Errors of treadle.logging that are also the AssertionError MMEngine raises in their place.

MMEngine checks the arguments of its MessageHub, HistoryBuffer and ManagerMixin with ``assert``;
code written for it catches AssertionError (toolbox tests do). treadle raises the exception type
that names the problem (TypeError, ValueError, KeyError) and, through these classes, MMEngine's
type as well, so that both kinds of ``except`` clause catch it.

Example:
    >>> from treadle.logging import MessageHub
    >>> try:
    ...     MessageHub('demo-errors').update_scalars({'loss': {'count': 2}})
    ... except AssertionError as error:
    ...     isinstance(error, KeyError)
    True
"""

from __future__ import annotations


class LoggingTypeError(TypeError, AssertionError):
    """An argument of the wrong type, where MMEngine asserts the type."""


class LoggingValueError(ValueError, AssertionError):
    """An argument with a wrong value, where MMEngine asserts it."""


class LoggingKeyError(KeyError, AssertionError):
    """A key missing (or one that should not be there), where MMEngine asserts it."""


class NotOneValueError(ValueError, TypeError, AssertionError):
    """A logged value (or count) with several elements instead of one: a ValueError in
    treadle's terms, the TypeError of MMEngine's ``HistoryBuffer.update`` and the AssertionError
    of its ``MessageHub.update_scalar``."""


__all__ = ["LoggingKeyError", "LoggingTypeError", "LoggingValueError", "NotOneValueError"]
