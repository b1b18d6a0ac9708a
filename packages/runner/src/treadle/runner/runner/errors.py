"""The Runner's errors where MMEngine raises another class for the same mistake.

MMEngine's Runner checks a few things with ``assert`` (``build_param_scheduler`` before
``build_optim_wrapper``, ``auto_scale_lr`` without ``base_batch_size``, ``scale_lr`` given no
built wrapper, a model without ``train_step``/``val_step``), and the tests of its users catch
AssertionError. Treadle raises the error that
says what went wrong as a class that is also an AssertionError, so both ``except`` clauses
catch it.
"""

from __future__ import annotations


class RunnerCallOrderError(RuntimeError, AssertionError):
    """A Runner method called before the one whose result it needs, where MMEngine asserts.

    Example:
        >>> try:
        ...     raise RunnerCallOrderError('build_optim_wrapper should be called before ...')
        ... except AssertionError as error:
        ...     isinstance(error, RuntimeError)
        True
    """


class RunnerConfigKeyError(KeyError, AssertionError):
    """A key missing from a part of the Runner's config, where MMEngine asserts.

    Printed as written (a KeyError quotes its message).

    Example:
        >>> try:
        ...     raise RunnerConfigKeyError("auto_scale_lr has no 'base_batch_size'")
        ... except AssertionError as error:
        ...     print(error)
        auto_scale_lr has no 'base_batch_size'
    """

    __str__ = BaseException.__str__


class RunnerTypeError(TypeError, AssertionError):
    """Something the Runner was given (an argument, the model) of the wrong type or without a
    method it needs, where MMEngine asserts.

    Example:
        >>> try:
        ...     raise RunnerTypeError('scale_lr needs the built optimizer wrapper')
        ... except AssertionError as error:
        ...     isinstance(error, TypeError)
        True
    """
