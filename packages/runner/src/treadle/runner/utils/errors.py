"""Errors of treadle.runner.utils where MMEngine's helpers assert.

MMEngine's ``mmengine.utils`` helpers check their arguments with ``assert`` (a base class given
as an instance, a deprecated keyword passed with its replacement, a TimeCounter without a tag);
code written for it catches AssertionError. treadle raises the error that says what is wrong as
a class that is also an AssertionError.
"""

from __future__ import annotations


class UtilsTypeError(TypeError, AssertionError):
    """An argument of the wrong kind, where MMEngine asserts.

    Example:
        >>> try:
        ...     raise UtilsTypeError('base_class must be a class, got an instance of Base')
        ... except AssertionError as error:
        ...     isinstance(error, TypeError)
        True
    """


class UtilsValueError(ValueError, AssertionError):
    """An argument with a value that cannot work, where MMEngine asserts.

    Example:
        >>> try:
        ...     raise UtilsValueError('warmup_interval must be greater than 0, got 0')
        ... except AssertionError as error:
        ...     isinstance(error, ValueError)
        True
    """


__all__ = ["UtilsTypeError", "UtilsValueError"]
