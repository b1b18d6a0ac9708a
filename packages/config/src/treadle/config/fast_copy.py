"""Deep copies of config values in one C-level pass (the pickle machine, never a file).

A loaded config's values are copied whole once per use: by ``to_dict`` (or ``pretty_text``),
or once, when something else first needs them as ``ConfigDict``. A Python walk pays an
interpreter round trip per value; here the C pickler and unpickler copy the builtin containers
and scalars, and Python runs only for the other objects, once each:

- ``reducer_override`` sees every object that is not a builtin scalar, string or container and
  tells how it is copied (``Rules``): a lazy import as its dotted string or as itself; a dict or
  list subclass (``ConfigDict``) as a plain dict or list; classes, functions and other objects
  as themselves (a reference, not a copy).
- Objects known beforehand (the lazy imports a load made) are placed in the pickler's memo, so
  each occurrence costs one memo lookup and comes back as the object named for it: itself, or
  its dotted string.

The pickler runs in fast mode (no memo of its own): an object met twice is copied twice, so the
copy shares no dict or list between two places even where the values did (``b = a`` in a
config), as a ``ConfigDict`` made of them would not.

Example:
    >>> from treadle.config.config_dict import ConfigDict
    >>> tree = {'a': [1, {'b': ConfigDict(c=2)}]}
    >>> tree['d'] = tree['a']
    >>> out = copy_tree(tree, TO_DICT)
    >>> out == tree, type(out['a'][1]['b']), out['a'] is out['d']
    (True, <class 'dict'>, False)
"""

from __future__ import annotations

import io
import pickle
from collections import OrderedDict

from .lazy import LazyAttr, LazyObject

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

_LAZY = (LazyObject, LazyAttr)


class Rules:
    """How ``copy_tree`` copies what is not a builtin scalar, string or container.

    Args:
        lazy_as_str: lazy imports become their dotted string (else they stay themselves).
        all_dicts: every dict subclass becomes a plain dict (else only ``ConfigDict`` and
            ``OrderedDict``, as a text-style config converts them; other subclasses stay as
            they are).
        all_lists: list subclasses become plain lists (else they stay as they are).
    """

    __slots__ = ("all_dicts", "all_lists", "lazy_as_str")

    def __init__(
        self, lazy_as_str: bool = False, all_dicts: bool = True, all_lists: bool = True
    ) -> None:
        self.lazy_as_str = lazy_as_str
        self.all_dicts = all_dicts
        self.all_lists = all_lists


#: ``to_dict``: plain dicts, lists and tuples, lazy imports as dotted strings.
TO_DICT = Rules(lazy_as_str=True)
#: ``_to_lazy_dict``: the same with lazy imports kept.
TO_LAZY_DICT = Rules()
#: What a pure-Python config's values become (MMEngine's ConfigDict takes every dict in).
PURE_VALUES = Rules()
#: What a text-style config's values become (``ConfigDict._hook``'s rule).
TEXT_VALUES = Rules(all_dicts=False, all_lists=False)


def copy_tree(value: Any, rules: Rules, known: Iterable[tuple[Any, Any]] = ()) -> Any:
    """A deep copy of ``value`` by ``rules``; ``known`` gives ``(object, what it becomes)``
    pairs for objects copied by name (see the module's docstring).

    Example:
        >>> lazy = LazyObject('collections', 'OrderedDict')
        >>> copy_tree({'type': lazy}, TO_DICT, [(lazy, lazy.dotted)])
        {'type': 'collections.OrderedDict'}
    """
    sources, targets, objects = _known(known)
    buffer = io.BytesIO()
    buffer.write(_seed_stream(len(targets)))
    try:
        _pickler(buffer, rules, sources, objects).dump(value)
    except ValueError as err:
        if "cyclic" not in str(err):
            raise
        from .errors import ConfigRecursionError

        # MMEngine's conversion recurses until "maximum recursion depth exceeded".
        raise ConfigRecursionError(
            "the config's values hold themselves (a list or dict inside itself), so copying "
            "them never ends: maximum recursion depth exceeded"
        ) from None
    buffer.seek(0)
    unpickler = _Unpickler(buffer, targets)
    unpickler.load()  # the seed: memo entry i is targets[i]
    return unpickler.load()


def _known(known: Iterable[tuple[Any, Any]]) -> tuple[list[Any], list[Any], list[Any]]:
    """The pickler's known objects and what the unpickler makes of them; the first stands for
    the objects copied by reference (``objects``, filled while pickling)."""
    objects: list[Any] = []
    take = objects.__getitem__
    sources: list[Any] = [take, dict, list, str]
    targets: list[Any] = [take, dict, list, str]
    for source, target in known:
        sources.append(source)
        targets.append(target)
    return sources, targets, objects


def _pickler(file: io.BytesIO, rules: Rules, sources: list[Any], objects: list[Any]) -> _Pickler:
    pickler = _Pickler(file, rules, objects, sources[0])
    pickler.memo = {id(source): (i, source) for i, source in enumerate(sources)}
    return pickler


class _Unpickler(pickle.Unpickler):
    """Reads the seed's persistent ids as the known targets. A method of a subclass, since
    Python 3.13 no longer lets an instance's ``persistent_load`` be assigned."""

    def __init__(self, file: io.BytesIO, targets: list[Any]) -> None:
        super().__init__(file)
        self._targets = targets

    def persistent_load(self, pid: Any) -> Any:
        return self._targets[pid]


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, rules: Rules, objects: list[Any], take: Any) -> None:
        super().__init__(file, pickle.HIGHEST_PROTOCOL)
        self.fast = True  # no memo: an object met twice is copied twice
        self.rules = rules
        self.objects = objects
        self.take = take
        from .config_dict import ConfigDict  # (config_dict imports this module)

        self.config_dict = ConfigDict

    def reducer_override(self, obj: Any) -> Any:
        rules = self.rules
        kind = type(obj)
        if kind in _LAZY:
            if rules.lazy_as_str:
                return str, (obj.dotted,)
            return self._same(obj)
        if isinstance(obj, dict) and (
            rules.all_dicts or kind is OrderedDict or issubclass(kind, self.config_dict)
        ):
            return dict, (), None, None, iter(dict.items(obj))
        if isinstance(obj, list) and rules.all_lists:
            return list, (), None, iter(list.__iter__(obj))
        return self._same(obj)

    def _same(self, obj: Any) -> tuple[Any, tuple[int]]:
        """The reduction that gives ``obj`` itself back."""
        self.objects.append(obj)
        return self.take, (len(self.objects) - 1,)


_seeds: dict[int, bytes] = {}


def _seed_stream(count: int) -> bytes:
    """A pickle that stores ``persistent_load(i)`` at memo entry ``i``, for ``i < count``:
    the unpickler's side of the pickler's memo of known objects. (Setting an unpickler's
    ``memo`` from a dict loses the entries in CPython 3.10-3.13, so the pickle does it.)"""
    stream = _seeds.get(count)
    if stream is None:
        parts = [pickle.PROTO + bytes([2])]
        for i in range(count):
            index = i.to_bytes(4, "little")
            # BININT i, BINPERSID (push persistent_load(i)), LONG_BINPUT i, POP
            parts.append(pickle.BININT + index + pickle.BINPERSID + pickle.LONG_BINPUT + index)
            parts.append(pickle.POP)
        parts.append(pickle.NONE + pickle.STOP)
        stream = b"".join(parts)
        if count < 4096:
            _seeds[count] = stream
    return stream
