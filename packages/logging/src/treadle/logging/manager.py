"""Global named instances: ``ManagerMeta`` and ``ManagerMixin``.

A class that mixes in ``ManagerMixin`` keeps a registry of its instances by name, so any part of
a program can reach "the" logger or "the" message hub of a run without passing it around.
"""

from __future__ import annotations

import threading
import warnings

from .errors import LoggingTypeError, LoggingValueError

# typing costs milliseconds to import; annotations are strings here, so it is needed only by
# type checkers.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# One lock for every managed class, re-entrant: building one managed instance may get another
# (a MessageHub whose construction logs through the current Logger, for example). One lock for
# all classes instead of one per class also rules out two threads taking two locks in opposite
# orders.
_LOCK = threading.RLock()


def _init_parameter_names(cls: type) -> tuple[str, ...]:
    """Names of the parameters of ``cls.__init__`` that can be passed by keyword."""
    init = getattr(cls, "__init__")  # noqa: B009 - on the class, not an instance
    code = getattr(init, "__code__", None)
    if code is not None:
        # Reading the code object is far cheaper than importing inspect at class creation.
        names: tuple[str, ...] = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        return names
    import inspect  # an __init__ without a code object (a C function, a callable object): rare

    try:
        return tuple(inspect.signature(init).parameters)
    except (TypeError, ValueError):
        return ()


class ManagerMeta(type):
    """Metaclass of ``ManagerMixin``: gives each class its own registry of instances.

    It also checks that the class can be built as ``cls(name=...)``, which ``get_instance``
    relies on.

    Example:
        >>> class Tracker(metaclass=ManagerMeta):
        ...     def __init__(self, name):
        ...         self.name = name
        >>> Tracker._instance_dict
        {}
    """

    def __init__(cls, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Set on every class, subclasses included, so a subclass never shares its parent's
        # registry: Logger.get_instance('a') and MyLogger.get_instance('a') are two objects.
        cls._instance_dict: dict[str, Any] = {}
        if "name" not in _init_parameter_names(cls):
            # "must have the `name` argument": MMEngine's words, which its users' tests match.
            raise LoggingTypeError(
                f"{cls.__qualname__} must have the `name` argument: its __init__ must accept a "
                f"`name` parameter, since classes that use {type(cls).__name__} (ManagerMixin) "
                f"are built as {cls.__name__}.get_instance(name=...)"
            )


class ManagerMixin(metaclass=ManagerMeta):
    """Mixin that keeps every instance of a class created by ``get_instance`` under its name.

    Instances built directly (``Cls(name='x')``) are not registered; ``get_instance`` builds and
    registers them, so later calls with the same name return the same object.

    Example:
        >>> class Counter(ManagerMixin):
        ...     def __init__(self, name, start=0):
        ...         super().__init__(name)
        ...         self.value = start
        >>> a = Counter.get_instance('steps', start=5)
        >>> Counter.get_instance('steps') is a
        True
        >>> Counter.get_current_instance().value
        5
    """

    # A class that names an instance here gets it created by get_current_instance() when none
    # exists yet; None (the default) makes get_current_instance() raise instead.
    default_instance_name: str | None = None

    def __init__(self, name: str = "", **kwargs: Any) -> None:
        # **kwargs is accepted and ignored so that cooperative subclasses can pass theirs along.
        if not isinstance(name, str):
            raise LoggingTypeError(
                f"the name of a {type(self).__name__} instance must be a str, "
                f"got {type(name).__name__}: {name!r}"
            )
        if not name:
            raise LoggingValueError(
                f"the name of a {type(self).__name__} instance must not be empty"
            )
        self._instance_name = name

    @classmethod
    def get_instance(cls, name: str, **kwargs: Any) -> Any:
        """Return the instance called ``name``, building it with ``kwargs`` on the first call.

        When the instance exists already, ``kwargs`` cannot apply to it: they are ignored with a
        warning.
        """
        with _LOCK:
            if not isinstance(name, str):
                # Also for a class whose __init__ does not pass the name to ManagerMixin's.
                raise LoggingTypeError(
                    f"the name of a {cls.__name__} instance must be a str, got "
                    f"{type(name).__name__}: {name!r}"
                )
            instance = cls._instance_dict.get(name)
            if instance is None:
                # Built under the lock so that concurrent first calls agree on one object.
                instance = cls(name=name, **kwargs)
                cls._instance_dict[name] = instance
            elif kwargs:
                warnings.warn(
                    f"the instance {name!r} of class {cls.__name__} already exists, so the "
                    f"arguments {', '.join(sorted(kwargs))} were ignored",
                    UserWarning,
                    stacklevel=2,
                )
            return instance

    @classmethod
    def get_current_instance(cls) -> Any:
        """Return the instance most recently created by ``get_instance``.

        With none created yet, a class that sets ``default_instance_name`` gets that instance
        created (as Logger and MessageHub do); any other class raises RuntimeError.
        """
        with _LOCK:
            if not cls._instance_dict and cls.default_instance_name is not None:
                cls.get_instance(cls.default_instance_name)
            if not cls._instance_dict:
                raise RuntimeError(
                    f"no {cls.__name__} instance has been created yet: call "
                    f"{cls.__name__}.get_instance(name=...) first"
                )
            # Dicts keep insertion order and get_instance never re-inserts, so the last key is
            # the newest instance.
            return next(reversed(cls._instance_dict.values()))

    @classmethod
    def check_instance_created(cls, name: str) -> bool:
        """Return whether ``get_instance`` has created an instance called ``name``."""
        return name in cls._instance_dict

    @property
    def instance_name(self) -> str:
        """The name this instance was created with."""
        return self._instance_name
