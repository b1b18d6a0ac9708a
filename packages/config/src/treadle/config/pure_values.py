"""The values of a pure-Python config file, handed to the code of the files that import them.

A file's values stay as its code left them: plain dicts and lists, nothing converted. Where a
child config imports them (``from .base import model``), each name the child's code can reach
is bound to a ``ConfigDict`` view (``bind``): a shallow copy whose dicts are wrapped when read
(``ConfigDict._read``, which copies too), so the child reads ``model.backbone.depth`` as
MMEngine's configs do, and one value imported along two paths is two copies, as MMEngine's
``ConfigDict`` of the base makes it.
"""

from __future__ import annotations

from .config_dict import ConfigDict, wrap, wrap_items

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_SEQUENCES = (list, tuple, set)


def bind(value: Any) -> Any:
    """What a config's code gets for a base's ``value``: dicts as ``ConfigDict`` copies (their
    own dicts plain until read), lists, tuples and sets copied with their dicts wrapped; a
    ``ConfigDict`` the base's code made is handed on as it is (each load runs the base for
    itself).

    Example:
        >>> kept = {'layers': [{'n': 1}], 'head': {'k': 2}}
        >>> model = bind(kept)
        >>> model.layers[0].n = 5
        >>> model.head.k = 7
        >>> kept
        {'layers': [{'n': 1}], 'head': {'k': 2}}
    """
    kind = type(value)
    if kind is dict:
        return wrap(value)
    if kind in _SEQUENCES:
        return wrap_items(value)
    if isinstance(value, dict) and not isinstance(value, ConfigDict):
        return wrap(dict(dict.items(value)))  # OrderedDict, defaultdict: ConfigDict too
    return value
