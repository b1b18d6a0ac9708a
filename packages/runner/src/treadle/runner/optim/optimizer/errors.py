"""The errors of optimizer wrappers and their constructors where MMEngine checks with
``assert``.

MMEngine asserts that an ``optim_wrapper`` config names its optimizer and that
``OptimWrapperDict`` is given wrappers, and its users' tests catch AssertionError. Treadle
raises the ValueError or TypeError that says what is wrong, as a class that is also an
AssertionError, so both ``except`` clauses catch it.
"""

from __future__ import annotations


class OptimConfigError(ValueError, AssertionError):
    """An ``optim_wrapper`` config that cannot build (no ``optimizer``), where MMEngine
    asserts.

    Example:
        >>> try:
        ...     raise OptimConfigError('`optim_wrapper_cfg` must contain the key optimizer')
        ... except AssertionError as error:
        ...     isinstance(error, ValueError)
        True
    """


class OptimWrapperTypeError(TypeError, AssertionError):
    """Something that is not an optimizer wrapper where one is needed, where MMEngine asserts.

    Example:
        >>> try:
        ...     raise OptimWrapperTypeError('`OptimWrapperDict` only accept OptimWrapper')
        ... except AssertionError as error:
        ...     isinstance(error, TypeError)
        True
    """
