"""The errors of the evaluator that MMEngine raises as another class.

MMEngine checks some arguments of its Evaluator with ``assert``, and code written for it catches
AssertionError; treadle raises the error that says what went wrong as a class that is also
MMEngine's, so both ``except`` clauses catch it.
"""

from __future__ import annotations


class EvaluatorArgumentError(ValueError, AssertionError):
    """Arguments that do not fit together, where MMEngine asserts.

    Example:
        >>> try:
        ...     evaluator.offline_evaluate(data_samples=[1, 2], data=[1])
        ... except AssertionError as error:
        ...     isinstance(error, ValueError)
        True
    """
