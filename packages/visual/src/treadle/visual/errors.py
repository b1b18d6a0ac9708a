"""The errors of treadle.visual where MMEngine raises an AssertionError for the same input.

MMEngine's Visualizer and backends check their arguments with ``assert`` (a box with x1 > x2,
a list of colours too short, an image that is None, a scalars file not ending in ``.json``),
and the tests of its users catch AssertionError. treadle raises the error that says what went
wrong (TypeError, ValueError) as a class that is also an AssertionError, so both ``except``
clauses catch it, and its message contains the words of MMEngine's where tests match on them.
"""

from __future__ import annotations


class VisualTypeError(TypeError, AssertionError):
    """An argument of the wrong type, where MMEngine asserts.

    Example:
        >>> try:
        ...     raise VisualTypeError('image must be a numpy array, got NoneType')
        ... except AssertionError as error:
        ...     isinstance(error, TypeError)
        True
    """


class VisualValueError(ValueError, AssertionError):
    """An argument of the wrong shape, length or value, where MMEngine asserts.

    Example:
        >>> try:
        ...     raise VisualValueError('positions must have shape (2, 2), got (1, 2)')
        ... except AssertionError as error:
        ...     isinstance(error, ValueError)
        True
    """
