"""The errors of treadle.dist that MMEngine raises as another class.

MMEngine checks some arguments of its collectives with ``assert`` (``broadcast_object_list`` of
something that is not a list, ``all_reduce_dict`` of something that is not a dict), and code
written for it catches AssertionError. treadle raises the error that says what went wrong as a
class that is also MMEngine's, so both ``except`` clauses catch it.
"""

from __future__ import annotations


class DistArgumentTypeError(TypeError, AssertionError):
    """An argument of the wrong type, where MMEngine asserts.

    Example:
        >>> from treadle import dist
        >>> try:
        ...     dist.broadcast_object_list('foo')
        ... except AssertionError as error:
        ...     isinstance(error, TypeError)
        True
    """
