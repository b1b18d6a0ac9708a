"""The errors of data elements that MMEngine raises as another class.

MMEngine checks most inputs of its data elements with ``assert`` (a field of the wrong length,
a bad index, ``cat([])``...), and the tests of its users catch AssertionError. Treadle raises
the error that says what went wrong (TypeError, ValueError, IndexError) as a class that is also
the one MMEngine raises for the same input, so both ``except`` clauses catch it.
"""

from __future__ import annotations


class DataElementTypeError(TypeError, AssertionError):
    """A value or index of the wrong type, where MMEngine asserts.

    Example:
        >>> try:
        ...     raise DataElementTypeError('metainfo should be a ``dict`` but got int')
        ... except AssertionError as error:
        ...     isinstance(error, TypeError)
        True
    """


class DataElementValueError(ValueError, AssertionError):
    """A value that does not fit the element (length, shape, range), where MMEngine asserts.

    Example:
        >>> try:
        ...     raise DataElementValueError('field b has length 1, field a has length 2')
        ... except AssertionError as error:
        ...     isinstance(error, ValueError)
        True
    """


class DataElementIndexError(IndexError, AssertionError):
    """An index that cannot select rows or pixels, where MMEngine asserts.

    Example:
        >>> try:
        ...     raise DataElementIndexError('the index must be 1-D')
        ... except AssertionError as error:
        ...     isinstance(error, IndexError)
        True
    """


class LabelDtypeError(TypeError, IndexError):
    """A label tensor that holds no class indices: MMEngine fails indexing with it (IndexError).

    Example:
        >>> isinstance(LabelDtypeError('label must hold integer class indices'), IndexError)
        True
    """


class LabelShapeError(ValueError, RuntimeError):
    """A label tensor of more than one dimension: MMEngine fails reading its maximum
    (RuntimeError).

    Example:
        >>> isinstance(LabelShapeError('label must be 0-D or 1-D'), RuntimeError)
        True
    """
