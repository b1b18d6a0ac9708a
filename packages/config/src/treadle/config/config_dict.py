"""``ConfigDict``: a dict whose keys are also attributes, nested dicts converted on the way in."""

from __future__ import annotations

from collections import OrderedDict

from .errors import ConfigAttributeError, closest
from .lazy import LazyAttr, LazyObject

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

    from typing_extensions import Self

DELETE_KEY = "_delete_"
_LAZY_TYPES = (LazyObject, LazyAttr)
_SEQUENCES = (list, tuple, set)
_new = dict.__new__
_fill = dict.update
_store = dict.__setitem__


# Any in quotes: typing is not imported at run time (import cost), and keys may be any hashable.
class ConfigDict(dict["Any", "Any"]):
    """A dict with attribute access; dicts nested in it (also inside lists and tuples) become
    ``ConfigDict`` too.

    Lazily imported objects of pure-Python configs (``LazyObject``) are built when read through
    ``cfg[key]``, ``cfg.key``, ``get``, ``pop``, ``values`` and ``items``; ``to_dict()`` shows
    them as dotted strings.

    A loaded config's values are plain dicts and lists until read: a plain dict found under a
    key is replaced, when first read, by a ``ConfigDict`` of its items (its dicts still plain,
    its lists and tuples copied with their dicts wrapped, as lists cannot tell when they are
    read), and that object is what every later read returns, so changes made through it stay.
    Users see ``ConfigDict`` all the way down; only ``dict.__getitem__`` and the like see the
    plain dicts.

    Example:
        >>> cfg = ConfigDict(model=dict(type='Net', layers=[dict(depth=2)]))
        >>> cfg.model.layers[0].depth
        2
        >>> cfg.optimizer
        Traceback (most recent call last):
        ...
        treadle.config.errors.ConfigAttributeError: 'ConfigDict' object has no attribute 'optimizer'
        >>> cfg.model.update(dict(layers=[]))
        >>> cfg.to_dict()
        {'model': {'type': 'Net', 'layers': []}}
    """

    # True while a pure-Python config executes: reads return the LazyObject itself so that the
    # config can refer to classes without importing them.
    lazy = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        for arg in args:
            if not arg:
                continue
            pairs: Iterable[Any]
            if isinstance(arg, dict):
                pairs = dict.items(arg)
            elif isinstance(arg, tuple) and not isinstance(arg[0], tuple):
                pairs = [arg]
            else:
                pairs = arg
            for key, value in pairs:
                dict.__setitem__(self, key, self._hook(value))
        for key, value in kwargs.items():
            dict.__setitem__(self, key, self._hook(value))

    @classmethod
    def _hook(cls, item: Any) -> Any:
        # Only plain dicts are converted: a user's own dict subclass keeps its type.
        kind = type(item)
        if kind is dict or kind is OrderedDict:
            return cls(item)
        if kind is list:
            return [cls._hook(elem) for elem in item]
        if kind is tuple:
            return tuple(cls._hook(elem) for elem in item)
        return item

    def _build(self, value: Any) -> Any:
        if not self.lazy and isinstance(value, _LAZY_TYPES):
            return value.build()
        return value

    build_lazy = _build

    def __missing__(self, name: Any) -> Any:
        raise KeyError(name)

    def _read(self, key: Any, value: Any) -> Any:
        """``value``, found under ``key``: a plain dict is wrapped (once: the wrapper is
        stored in its place), a lazy object built unless configs are running."""
        if type(value) is dict:
            wrapped = wrap(value, type(self))
            # Another thread may have wrapped it meanwhile: then its wrapper is the one.
            if dict.get(self, key) is value:
                _store(self, key, wrapped)
                return wrapped
            return self[key]
        if not self.lazy and isinstance(value, _LAZY_TYPES):
            return value.build()
        return value

    def _wrap_all(self) -> None:
        """Wrap every plain dict this holds (before sharing values with another ConfigDict,
        which must then see the same objects)."""
        for key, value in list(dict.items(self)):
            if type(value) is dict:
                _store(self, key, wrap(value, type(self)))

    def __getattr__(self, name: str) -> Any:
        try:
            value = dict.__getitem__(self, name)
        except KeyError:
            hint = closest(name, self.keys()) if not name.startswith("__") else ""
            raise ConfigAttributeError(
                f"'{type(self).__name__}' object has no attribute '{name}'{hint}"
            ) from None
        return self._read(name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        if hasattr(type(self), name):
            raise AttributeError(f"'ConfigDict' object attribute '{name}' is read-only")
        dict.__setitem__(self, name, self._hook(value))

    def __delattr__(self, name: str) -> None:
        try:
            del self[name]
        except KeyError:
            raise ConfigAttributeError(f"'ConfigDict' has no key {name!r}") from None

    def __setitem__(self, name: Any, value: Any) -> None:
        dict.__setitem__(self, name, self._hook(value))

    def __getitem__(self, key: Any) -> Any:
        return self._read(key, dict.__getitem__(self, key))

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *(k for k in self.keys() if isinstance(k, str))]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys())

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _MISSING)
        if value is _MISSING:
            return self._build(default)
        return self._read(key, value)

    def pop(self, key: Any, *default: Any) -> Any:
        # MMEngine's pop returns None for a missing key when no default is given.
        value = dict.pop(self, key, *(default or (None,)))
        if type(value) is dict:
            return wrap(value, type(self))
        return self._build(value)

    def popitem(self) -> tuple[Any, Any]:
        key, value = dict.popitem(self)
        if type(value) is dict:
            return key, wrap(value, type(self))
        return key, self._build(value)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    # Lists, as MMEngine's ConfigDict returns (its values are built on the way out), not views.
    def values(self) -> list[Any]:  # type: ignore[override]
        return [self._read(k, v) for k, v in list(dict.items(self))]

    def items(self) -> list[tuple[Any, Any]]:  # type: ignore[override]
        return [(k, self._read(k, v)) for k, v in list(dict.items(self))]

    def update(self, *args: Any, **kwargs: Any) -> None:
        """Update recursively: a dict given for a key that holds a dict updates that dict."""
        if len(args) > 1:
            raise TypeError(f"update expected at most 1 positional argument, got {len(args)}")
        other: dict[str, Any] = {}
        if args:
            source = args[0]
            pairs = dict.items(source) if isinstance(source, dict) else source
            other.update(pairs)
        other.update(kwargs)
        for key, value in other.items():
            current = dict.get(self, key)
            if type(current) is dict:
                current = self._read(key, current)
            if isinstance(current, dict) and isinstance(value, dict):
                current.update(value)
            else:
                self[key] = value

    def merge(self, other: dict[str, Any]) -> None:
        """Merge ``other`` in, recursively; a dict with ``_delete_=True`` replaces instead."""
        import copy

        merged = _merge_values(copy.deepcopy(other), copy.deepcopy(self))
        dict.clear(self)
        for key, value in merged.items():
            self[key] = value

    def copy(self) -> ConfigDict:
        self._wrap_all()  # the copy shares the values: the same objects on both sides
        return type(self)(dict(dict.items(self)))

    __copy__ = copy

    def __deepcopy__(self, memo: dict[int, Any]) -> ConfigDict:
        import copy

        other = type(self)()
        memo[id(self)] = other
        for key, value in dict.items(self):
            dict.__setitem__(other, copy.deepcopy(key, memo), copy.deepcopy(value, memo))
        return other

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        # Without this, pickle would call items() and build the lazy objects.
        return (type(self), (dict(dict.items(self)),))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ConfigDict):
            return self.to_dict() == other.to_dict()
        if isinstance(other, dict):
            return dict(self.items()) == other
        return False

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None

    def __or__(self, other: Any) -> ConfigDict:  # what update() takes: a mapping or pairs
        merged = self.copy()
        merged.update(other)
        return merged

    def __ior__(self, other: Any) -> Self:
        self.update(other)
        return self

    def to_dict(self) -> dict[str, Any]:
        """Plain dicts, lists and tuples all the way down; lazy objects as dotted strings."""
        plain: dict[str, Any] = to_plain(self, lazy_as_str=True)
        return plain

    def _to_lazy_dict(self) -> dict[str, Any]:
        """Plain dicts all the way down, lazy objects kept as they are."""
        plain: dict[str, Any] = to_plain(self, lazy_as_str=False)
        return plain


def to_plain(value: Any, lazy_as_str: bool = True, known: Any = ()) -> Any:
    """A copy of ``value`` with plain dicts, lists and tuples (every dict and list subclass
    converted, other tuples kept), lazy objects as dotted strings or kept; ``known``: the lazy
    objects it is likely to hold (fast_copy.py). One C-level pass."""
    from .fast_copy import TO_DICT, TO_LAZY_DICT, copy_tree

    if lazy_as_str:
        return copy_tree(value, TO_DICT, [(lazy, lazy.dotted) for lazy in known])
    return copy_tree(value, TO_LAZY_DICT, [(lazy, lazy) for lazy in known])


def wrap(plain: dict[Any, Any], kind: type[ConfigDict] = ConfigDict) -> ConfigDict:
    """A ``kind`` holding the items of ``plain``: its lists, tuples and sets copied (dicts in
    them wrapped), its dicts left plain, to be wrapped when read (``ConfigDict._read``).

    Example:
        >>> cfg = wrap({'a': {'b': 1}, 'c': [{'d': 2}]})
        >>> type(dict.__getitem__(cfg, 'a')).__name__, type(cfg['c'][0]).__name__
        ('dict', 'ConfigDict')
        >>> type(cfg.a).__name__, cfg.a is cfg.a
        ('ConfigDict', True)
    """
    wrapped = _new(kind)
    _fill(wrapped, plain)
    for key, value in dict.items(plain):
        if type(value) in _SEQUENCES:
            _store(wrapped, key, wrap_items(value, kind))
    return wrapped


def wrap_items(items: list[Any] | tuple[Any, ...] | set[Any], kind: type = ConfigDict) -> Any:
    """A copy of a list, tuple or set with the dicts in it (at any depth of lists and tuples)
    wrapped."""
    copied = [
        wrap(v, kind) if type(v) is dict else wrap_items(v, kind) if type(v) in _SEQUENCES else v
        for v in items
    ]
    if type(items) is list:
        return copied
    return tuple(copied) if type(items) is tuple else set(copied)


_MISSING = object()


def _merge_values(new: Any, old: Any) -> Any:
    """ConfigDict.merge's rule: dicts merge key by key unless ``_delete_`` is set."""
    if not isinstance(new, dict):
        return old if new is _MISSING else new
    if not isinstance(old, dict):
        new.pop(DELETE_KEY, None)
        return new
    if new.pop(DELETE_KEY, False):
        old = {}
    keys = list(dict.fromkeys([*dict.keys(old), *dict.keys(new)]))
    return {
        k: _merge_values(dict.get(new, k, _MISSING), dict.get(old, k, _MISSING))
        for k in keys
        if k != DELETE_KEY
    }
