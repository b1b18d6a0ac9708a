"""``LazyObject`` and ``LazyAttr``: imports of a pure-Python config that run only when used.

A pure-Python config may write ``from mypkg.models import Net`` and ``model = dict(type=Net)``
without ``mypkg`` being imported while the config loads: the import becomes
``LazyObject('mypkg.models', 'Net')`` and attribute access on it a ``LazyAttr``. ``build()``
imports for real. ``ConfigDict`` builds them when a value is read, so users see real objects.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class LazyObject:
    """A module, or a name from a module, imported on ``build()``.

    Args:
        module: the module (``'a.b'``), or several modules of one package (``['a', 'a.b']``,
            what ``import a; import a.b`` gives: building imports them all and returns ``a``).
        imported: the name imported from ``module``, or None for the module itself.
        location: ``'file, line N'`` of the import statement, for errors.

    Example:
        >>> od = LazyObject('collections', 'OrderedDict')
        >>> od.build()
        <class 'collections.OrderedDict'>
        >>> od.module, str(od), od.dotted
        ('collections', 'OrderedDict', 'collections.OrderedDict')
    """

    def __init__(
        self,
        module: str | list[str] | tuple[str, ...],
        imported: str | None = None,
        location: str | None = None,
    ) -> None:
        if not isinstance(module, str) and not (
            isinstance(module, (list, tuple)) and all(isinstance(m, str) for m in module)
        ):
            raise TypeError(f"module must be a str or a list of str, got {module!r}")
        if imported is not None and not isinstance(imported, str):
            raise TypeError(f"imported must be a str or None, got {imported!r}")
        self._module = module
        self._imported = imported
        self.location = location

    @property
    def module(self) -> str:
        """The module the object comes from (the package for ``import a.b``)."""
        if isinstance(self._module, str):
            return self._module
        return self._module[0].split(".")[0]

    @property
    def dotted(self) -> str:
        """The full dotted path, e.g. ``'collections.OrderedDict'``; what ``to_dict`` shows."""
        if self._imported is None:
            return self.module
        return f"{self.module}.{self._imported}"

    def build(self) -> Any:
        """Import and return the object."""
        where = f" (imported in {self.location})" if self.location else ""
        modules = [self._module] if isinstance(self._module, str) else list(self._module)
        try:
            for name in modules:
                module = importlib.import_module(name)
        except ImportError as err:
            # MMEngine's phrase ("Failed to import"), then Python's reason.
            raise type(err)(f"Failed to import {err.name or modules}{where}: {err}") from err
        if not isinstance(self._module, str):
            return importlib.import_module(self.module)
        if self._imported is None:
            return module
        try:
            return getattr(module, self._imported)
        except AttributeError:
            raise ImportError(
                f"Failed to import {self.dotted}{where}: cannot import name "
                f"{self._imported!r} from {self._module!r}"
            ) from None

    def __getattr__(self, name: str) -> LazyAttr:
        if name.startswith("__") or name in ("_module", "_imported", "location"):
            raise AttributeError(name)
        location = self.location.split(", line")[0] if self.location else None
        return LazyAttr(name, self, location)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"{self.dotted} is imported lazily in the config{self._where()}: it cannot be "
            "called while the config loads; put it in a dict as type=... instead"
        )

    def _where(self) -> str:
        return f" ({self.location})" if self.location else ""

    def __deepcopy__(self, memo: dict[str, Any]) -> LazyObject:
        return LazyObject(self._module, self._imported, self.location)

    def __copy__(self) -> LazyObject:
        return self.__deepcopy__({})

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LazyObject):
            return NotImplemented
        return (self._module, self._imported) == (other._module, other._imported)

    def __hash__(self) -> int:
        return hash((str(self._module), self._imported))

    def __str__(self) -> str:
        return self._imported if self._imported is not None else self.module

    __repr__ = __str__


class LazyAttr:
    """An attribute of a ``LazyObject`` (or of another ``LazyAttr``), resolved on ``build()``.

    Example:
        >>> path = LazyObject('os').path.join
        >>> path.module, str(path), path.dotted
        ('os.path', 'join', 'os.path.join')
        >>> path.build() is __import__('os').path.join
        True
    """

    def __init__(self, name: str, source: LazyObject | LazyAttr, location: str | None = None):
        self.name = name
        self.source = source
        self.location = location

    @property
    def module(self) -> str:
        """Dotted path of the object this is an attribute of."""
        return self.source.dotted

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.name}"

    def build(self) -> Any:
        """Build the source, then return its attribute."""
        obj = self.source.build()
        try:
            return getattr(obj, self.name)
        except AttributeError:
            where = f" (imported in {self.location})" if self.location else ""
            raise ImportError(
                f"Failed to import {self.dotted}{where}: {self.module} has no attribute "
                f"{self.name!r}"
            ) from None

    def __getattr__(self, name: str) -> LazyAttr:
        if name.startswith("__") or name in ("name", "source", "location"):
            raise AttributeError(name)
        return LazyAttr(name, self, self.location)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"{self.dotted} is imported lazily in the config: it cannot be called while the "
            "config loads; put it in a dict as type=... instead"
        )

    def __deepcopy__(self, memo: dict[str, Any]) -> LazyAttr:
        return LazyAttr(self.name, self.source, self.location)

    def __copy__(self) -> LazyAttr:
        return self.__deepcopy__({})

    def __getstate__(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LazyAttr):
            return NotImplemented
        return self.dotted == other.dotted

    def __hash__(self) -> int:
        return hash(self.dotted)

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


def is_lazy(value: object) -> bool:
    return isinstance(value, (LazyObject, LazyAttr))
