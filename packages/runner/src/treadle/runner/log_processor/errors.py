"""The errors of a ``custom_cfg`` that MMEngine raises as another class.

MMEngine checks ``custom_cfg`` with ``assert`` (an entry without ``data_src``, two entries writing
one name, ``window_size='epoch'`` with ``by_epoch=False``) and finds an unknown ``window_size``
only at the first log line, with a TypeError. Treadle raises at build time, with a message that
names the entry, as a class that is also MMEngine's, so the ``except`` clauses of toolbox code
and tests written for MMEngine still catch it.
"""

from __future__ import annotations

import re


class CustomCfgError(ValueError, AssertionError):
    """A ``custom_cfg`` entry MMEngine refuses with ``assert``.

    Example:
        >>> try:
        ...     raise CustomCfgError("custom_cfg[1] writes 'loss', which custom_cfg[0] writes")
        ... except AssertionError as error:
        ...     isinstance(error, ValueError)
        True
    """


class WindowSizeError(ValueError, TypeError):
    """A ``window_size`` that is neither an int nor ``'epoch'``/``'global'``: a bad value,
    and the TypeError MMEngine raises for it at the first log line.

    Example:
        >>> isinstance(WindowSizeError("window_size should be int, epoch or global"), TypeError)
        True
    """


class CustomCfgTypeError(TypeError, AssertionError):
    """A ``custom_cfg`` that is not a list of dicts, or an entry that is not a dict: MMEngine
    fails on it when built, with an AssertionError (a str entry holds no ``'data_src'``) or a
    TypeError (an int entry cannot hold anything).

    Example:
        >>> isinstance(CustomCfgTypeError("custom_cfg[0] must be a dict"), AssertionError)
        True
    """


class MeanPatternError(ValueError, TypeError, re.error):
    """``mean_pattern`` is not a regular expression: MMEngine's ``re.compile`` raises
    ``re.error`` for a bad pattern and a TypeError for a value that is no pattern; this error is
    both, and a ValueError.

    Example:
        >>> isinstance(MeanPatternError("mean_pattern '(' is not a regular expression"), re.error)
        True
    """
