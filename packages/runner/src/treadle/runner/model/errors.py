"""The errors of models and their parts where MMEngine checks with ``assert``.

MMEngine asserts on the arguments of its averaged models and data preprocessors (an EMA
momentum outside (0, 1), ``mean`` without ``std``) and on the images a preprocessor is given,
and its users' tests catch AssertionError. Treadle raises the ValueError that says what is
wrong, as a class that is also an AssertionError, so both ``except`` clauses catch it.
"""

from __future__ import annotations


class ModelArgumentError(ValueError, AssertionError):
    """A bad argument of a model part (averaged model, data preprocessor), where MMEngine
    asserts.

    Example:
        >>> try:
        ...     raise ModelArgumentError('momentum must be in range (0, 1), got 3')
        ... except AssertionError as error:
        ...     isinstance(error, ValueError)
        True
    """


class ModelInputError(ValueError, AssertionError):
    """Input data a model part cannot take (an image of the wrong shape), where MMEngine
    asserts.

    Example:
        >>> try:
        ...     raise ModelInputError('If the mean has 3 values, the image needs 3 channels')
        ... except AssertionError as error:
        ...     isinstance(error, ValueError)
        True
    """
