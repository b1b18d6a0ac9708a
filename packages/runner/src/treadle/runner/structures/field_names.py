"""A data element's field name tables as MMEngine's sets.

MMEngine keeps ``_metainfo_fields`` and ``_data_fields`` as sets, and toolboxes' own data
elements change them as sets (``self._data_fields.add(name)``, ``.remove(name)``, ``name in
self._data_fields``). Treadle keeps each table as a plain dict of names (``_metainfo_names``,
``_data_names``: ordered, and as fast as a dict on the element's own hot paths, where a dict
or set subclass would route every ``in`` through a Python-level lookup), and
``_metainfo_fields`` / ``_data_fields`` are class attributes (``FieldTable``) that hand out a
set view of the table (``FieldNames``): whatever is done through the view changes the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableSet
from typing import Any

IMMUTABLE = "{name} has been used as a private attribute, which is immutable."


class FieldNames(MutableSet):
    """A set view of a data element's name table: it answers as a ``set`` does (``in``,
    ``add``, ``discard``, ``remove``, ``update``, the operators ``-``, ``&``, ``|``, ``^``,
    comparison with a set), iterates in the order the names were set, and changes the table.
    Operators give plain sets, as they do on MMEngine's tables.

    Example:
        >>> names = FieldNames({'bboxes': None, 'labels': None})
        >>> names.add('scores')
        >>> list(names), 'labels' in names
        (['bboxes', 'labels', 'scores'], True)
        >>> names - {'labels'} == {'bboxes', 'scores'}
        True
    """

    __slots__ = ("_names",)

    def __init__(self, names: dict[str, None]) -> None:
        self._names = names

    @classmethod
    def _from_iterable(cls, iterable: Iterable[str]) -> set[str]:
        # What the operators of collections.abc.Set return: a plain set, as MMEngine's tables.
        return set(iterable)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def add(self, name: str) -> None:
        """Add ``name`` (at the end, unless it is there already)."""
        self._names[name] = None

    def discard(self, name: str) -> None:
        """Remove ``name`` if it is there."""
        self._names.pop(name, None)

    def update(self, *others: Iterable[str]) -> None:
        """Add the names of each iterable (a mapping gives its keys), as ``set.update``."""
        for other in others:
            for name in other:
                self._names[name] = None

    def copy(self) -> set[str]:
        """The names as a new set, as ``set.copy`` gives."""
        return set(self._names)

    def union(self, *others: Iterable[str]) -> set[str]:
        return set(self._names).union(*others)

    def intersection(self, *others: Iterable[str]) -> set[str]:
        return set(self._names).intersection(*others)

    def difference(self, *others: Iterable[str]) -> set[str]:
        return set(self._names).difference(*others)

    def symmetric_difference(self, other: Iterable[str]) -> set[str]:
        return set(self._names).symmetric_difference(other)

    def issubset(self, other: Iterable[str]) -> bool:
        return set(self._names).issubset(other)

    def issuperset(self, other: Iterable[str]) -> bool:
        return set(self._names).issuperset(other)

    def __repr__(self) -> str:
        return "{" + ", ".join(map(repr, self._names)) + "}" if self._names else "set()"


class FieldTable:
    """The class attribute ``_metainfo_fields`` or ``_data_fields`` of a data element: reading
    it gives a ``FieldNames`` view of the instance's table (the dict ``store``); it cannot be
    assigned or deleted, as MMEngine's cannot.

    Example:
        >>> class Element:
        ...     _data_fields = FieldTable('_data_names')
        ...     def __init__(self):
        ...         self._data_names = {'a': None}
        >>> Element()._data_fields
        {'a'}
    """

    def __init__(self, store: str) -> None:
        self.store = store
        self.name = store

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, element: Any, owner: type | None = None) -> Any:
        if element is None:
            return self
        try:
            return FieldNames(element.__dict__[self.store])
        except KeyError:
            raise AttributeError(
                f"{type(element).__name__} has no {self.name}: its __init__ did not run "
                f"BaseDataElement.__init__"
            ) from None

    def __set__(self, element: Any, value: Any) -> None:
        raise AttributeError(IMMUTABLE.format(name=self.name))

    def __delete__(self, element: Any) -> None:
        raise AttributeError(IMMUTABLE.format(name=self.name))
