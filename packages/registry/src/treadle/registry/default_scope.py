"""``DefaultScope``: the scope a run builds in, reachable from anywhere in the program.

A runner sets it once (``init_default_scope('mydet')``); every later ``Registry.build`` then
looks for the type in the registry of that scope, so a config written for mydet can say
``type='FasterRCNN'`` instead of ``type='mydet.FasterRCNN'``.
"""

from __future__ import annotations

import itertools
import logging
from contextlib import contextmanager

from treadle.logging import ManagerMixin, print_log

from .errors import RegistryArgumentError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

# Names of the instances this module creates itself: unique within the process, so that
# get_instance never hands back an older instance that has another scope.
_instance_numbers = itertools.count(1)


class DefaultScope(ManagerMixin):
    """The default scope of the current task, as a global named instance.

    The newest instance created by ``get_instance`` is the current default scope.

    Args:
        name: the instance name, as for any ``ManagerMixin``.
        scope_name: the scope, that is, the top-level package name of the project whose
            registries should be searched first (``'treadle'``, ``'mydet'``).

    Example:
        >>> scope = DefaultScope.get_instance('task', scope_name='mydet')
        >>> DefaultScope.get_current_instance().scope_name
        'mydet'
        >>> with DefaultScope.overwrite_default_scope('mycls'):
        ...     DefaultScope.get_current_instance().scope_name
        'mycls'
        >>> DefaultScope.get_current_instance().scope_name
        'mydet'
    """

    def __init__(self, name: str, scope_name: str) -> None:
        super().__init__(name)
        if not isinstance(scope_name, str):
            raise RegistryArgumentError(
                f"DefaultScope's scope_name must be a str, got {type(scope_name).__name__}: "
                f"{scope_name!r}"
            )
        self._scope_name = scope_name

    @property
    def scope_name(self) -> str:
        """The scope this instance stands for."""
        return self._scope_name

    @classmethod
    def get_current_instance(cls) -> DefaultScope | None:
        """Return the newest instance, or None when none was created (a default scope is
        optional, unlike a logger)."""
        if not cls._instance_dict:
            return None
        instance: DefaultScope = super().get_current_instance()
        return instance

    @classmethod
    @contextmanager
    def overwrite_default_scope(cls, scope_name: str | None) -> Iterator[None]:
        """Make ``scope_name`` the default scope inside a ``with`` block; None changes nothing.

        On leaving the block the instances are exactly those from before it: any created
        inside it are forgotten too, so a build with ``_scope_`` leaves no trace.
        """
        if scope_name is None:
            yield
            return
        saved = dict(cls._instance_dict)
        cls.get_instance(f"overwrite-{next(_instance_numbers)}", scope_name=scope_name)
        try:
            yield
        finally:
            # In place: a class's _instance_dict is the one ManagerMeta gave it.
            cls._instance_dict.clear()
            cls._instance_dict.update(saved)


def current_scope_name() -> str | None:
    """The scope name of the current DefaultScope, or None; cheap enough for every build."""
    instances = DefaultScope._instance_dict
    if not instances:
        return None
    newest: DefaultScope = next(reversed(instances.values()))
    return newest._scope_name


def init_default_scope(scope: str) -> None:
    """Make ``scope`` the current default scope, creating an instance named ``scope`` for it.

    When an instance named ``scope`` exists but another scope is current, a new instance makes
    ``scope`` current again and a warning says so.

    Example:
        >>> init_default_scope('mydet')
        >>> DefaultScope.get_current_instance().scope_name
        'mydet'
    """
    current = DefaultScope.get_current_instance()
    if current is None or not DefaultScope.check_instance_created(scope):
        DefaultScope.get_instance(scope, scope_name=scope)
        return
    if current.scope_name != scope:
        print_log(
            f"the current default scope is {current.scope_name!r}, not {scope!r}: "
            f"init_default_scope({scope!r}) makes {scope!r} the default scope",
            logger="current",
            level=logging.WARNING,
        )
        DefaultScope.get_instance(f"{scope}-{next(_instance_numbers)}", scope_name=scope)
