"""What the Runner takes as the config of a part: any mapping, or a whole ``Config``.

MMEngine's Runner reads its parts' configs with ``get``/``pop``/``setdefault``, so a ``Config``
(``Config.fromfile('loader.py')``), a ``ConfigDict`` or any other mapping works wherever it takes
a dict. A ``Config`` is no ``collections.abc.Mapping`` (it wraps one), so the Runner's checks ask
:func:`is_cfg`, and :func:`as_cfg` turns a ``Config`` into the dict of its items before a part is
built from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from treadle.config import Config


def is_cfg(value: Any) -> bool:
    """Whether ``value`` is a config the Runner builds a part from: a mapping or a Config.

    Example:
        >>> is_cfg(Config(dict(type='ValLoop'))), is_cfg(dict()), is_cfg('ValLoop')
        (True, True, False)
    """
    return isinstance(value, (Mapping, Config))


def as_cfg(value: Any) -> Any:
    """A ``Config`` as the dict of its items (nested configs stay ConfigDicts); anything else,
    mappings included, as it is.

    Example:
        >>> as_cfg(Config(dict(type='ValLoop')))
        {'type': 'ValLoop'}
    """
    if isinstance(value, Config):
        return dict(value)
    return value


def as_cfg_items(values: Any) -> Any:
    """A list or tuple with each ``Config`` in it as a dict (hooks, schedulers, metrics); a
    single value as :func:`as_cfg` gives it.

    Example:
        >>> as_cfg_items([Config(dict(type='EMAHook'))])
        [{'type': 'EMAHook'}]
    """
    if isinstance(values, (list, tuple)):
        return type(values)(as_cfg(value) for value in values)
    return as_cfg(values)
