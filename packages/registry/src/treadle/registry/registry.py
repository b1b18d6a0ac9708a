"""``Registry``: the names configs use (``type='ResNet'``), mapped to what they build.

Registries form trees: a downstream project creates child registries of treadle's root ones,
each child with its project's scope. A name is searched in a registry, then in its parents;
``'scope.Name'`` searches the registry of that scope wherever it is in the tree.
"""

from __future__ import annotations

import logging
import sys
import weakref
from contextlib import contextmanager

from treadle.logging import print_log

from . import entry_points as _plugins
from .default_scope import DefaultScope, current_scope_name
from .errors import RegistryArgumentError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from types import FrameType
    from typing import Any

# Bumped whenever a registry gains a child anywhere: a root caches where each scope lives, and
# a cached answer is good while the generation it was found in is current.
_generation = 0

#: Scopes that stand for another scope when no registry has them, by name: treadle.compat maps
#: 'mmengine' (MMEngine's root scope, in ``default_scope = 'mmengine'`` and ``'mmengine.Name'``
#: keys) to treadle's root scope while it is installed. Empty otherwise.
SCOPE_ALIASES: dict[str, str] = {}

# The root registries of the process, for count_registered_modules.
_roots: weakref.WeakSet[Registry] = weakref.WeakSet()


def _infer_scope() -> str:
    """The top-level package of the module that created the registry ('mydet.models.x' gives
    'mydet'), skipping this module and the __init__ of Registry subclasses."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        module_name = frame.f_globals.get("__name__")
        if module_name != __name__ and not (
            frame.f_code.co_name == "__init__" and isinstance(frame.f_locals.get("self"), Registry)
        ):
            break
        frame = frame.f_back
    module_name = frame.f_globals.get("__name__") if frame is not None else None
    if not isinstance(module_name, str) or not module_name:
        print_log(
            "the scope of a Registry could not be inferred from the module that creates it; "
            "'treadle' is used. Pass scope='...' to Registry to choose it.",
            logger="current",
            level=logging.WARNING,
        )
        return "treadle"
    return module_name.partition(".")[0]


class Registry:
    """Maps names to classes and functions, and builds objects from configs that name them.

    Args:
        name: the registry's name, shown in messages (``'models'``).
        build_func: builds an object from a config; ``build_from_cfg`` unless the parent has
            another, which is then inherited.
        parent: the registry this one extends. Names not found here are searched there, and
            the parent reaches this registry's names as ``'scope.Name'``.
        scope: the project this registry belongs to; by default the top-level package of the
            module that creates the registry.
        locations: modules to import the first time the registry is searched, so that the
            classes they register are there without importing them by hand.

    Example:
        >>> MODELS = Registry('models', scope='treadle')
        >>> @MODELS.register_module()
        ... class ResNet:
        ...     def __init__(self, depth=50):
        ...         self.depth = depth
        >>> MODELS.build(dict(type='ResNet', depth=18)).depth
        18
        >>> DET_MODELS = Registry('models', parent=MODELS, scope='mydet')
        >>> @DET_MODELS.register_module()
        ... class FasterRCNN:
        ...     pass
        >>> type(MODELS.build(dict(type='mydet.FasterRCNN'))).__name__
        'FasterRCNN'
    """

    def __init__(
        self,
        name: str,
        build_func: Callable[..., Any] | None = None,
        parent: Registry | None = None,
        scope: str | None = None,
        locations: Iterable[str] = (),
    ) -> None:
        if not isinstance(name, str):
            raise TypeError(f"a registry's name must be a str, got {type(name).__name__}")
        if scope is None:
            scope = _infer_scope()
        elif not isinstance(scope, str):
            raise RegistryArgumentError(
                f"the scope of registry {name!r} must be a str, got {type(scope).__name__}"
            )
        if not scope or "." in scope:
            raise ValueError(
                f"the scope of registry {name!r} must be a non-empty name without dots (keys "
                f"are written 'scope.Name'), got {scope!r}"
            )
        if parent is not None and not isinstance(parent, Registry):
            raise RegistryArgumentError(
                f"the parent of registry {name!r} must be a Registry, got {type(parent).__name__}"
            )
        if isinstance(locations, str):
            locations = [locations]
        self._name = name
        self._scope = scope
        self._module_dict: dict[str, Any] = {}
        self._children: dict[str, Registry] = {}
        self._locations = list(locations)
        self._imported = False  # whether `locations` were imported
        self._plugins_epoch = -1  # the entry-point epoch this registry last loaded plugins in
        self._scope_cache: dict[str, tuple[int, int, Registry | None]] = {}
        self._scopes_warned: set[str] = set()
        self.parent = parent
        if parent is not None:
            parent._add_child(self)
        else:
            _roots.add(self)
        if build_func is None:
            if parent is not None:
                build_func = parent.build_func
            else:
                from .build_functions import build_from_cfg

                build_func = build_from_cfg
        self.build_func: Callable[..., Any] = build_func

    # -- what the registry is --------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def scope(self) -> str:
        return self._scope

    @property
    def module_dict(self) -> dict[str, Any]:
        """The registered names and objects of this registry alone (not its parents')."""
        return self._module_dict

    @property
    def children(self) -> dict[str, Registry]:
        """The child registries, by scope."""
        return self._children

    @property
    def root(self) -> Registry:
        """The registry at the top of this one's tree."""
        return self._get_root_registry()

    @staticmethod
    def infer_scope() -> str:
        """The top-level package of the calling module: 'mydet' in 'mydet.models.resnet'."""
        return _infer_scope()

    @staticmethod
    def split_scope_key(key: str) -> tuple[str | None, str]:
        """Split the first scope off a key: 'mydet.ResNet' gives ('mydet', 'ResNet'),
        'ResNet' gives (None, 'ResNet')."""
        scope, dot, name = key.partition(".")
        return (scope, name) if dot else (None, key)

    def __len__(self) -> int:
        return len(self._module_dict)

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._module_dict)

    def __repr__(self) -> str:
        from .table import registry_table

        return registry_table(self)

    # -- registering -----------------------------------------------------------------------

    def register_module(
        self,
        name: str | Iterable[str] | None = None,
        force: bool = False,
        module: Any = None,
    ) -> Any:
        """Register a class or function, under its own name or ``name`` (a str or a list).

        Use it as a decorator, ``@REG.register_module()``, or as a call,
        ``REG.register_module(module=ResNet)``. A name that is taken raises KeyError unless
        ``force=True``, which replaces the old object.

        Example:
            >>> BACKBONES = Registry('backbones', scope='treadle')
            >>> @BACKBONES.register_module(name=['mnet', 'MobileNet'])
            ... class MobileNet:
            ...     pass
            >>> BACKBONES.get('mnet') is BACKBONES.get('MobileNet') is MobileNet
            True
        """
        if not isinstance(force, bool):
            # "force must be a boolean, but got <class ...>": MMEngine's words, which its users'
            # tests match.
            raise TypeError(
                f"register_module in {self._name!r}: force must be a boolean, but got "
                f"{type(force)}: {force!r}"
            )
        if not (name is None or isinstance(name, str)):
            given = name
            try:
                name = list(name)
            except TypeError:
                name = [name]  # type: ignore[list-item]
            if not all(isinstance(item, str) for item in name):
                raise TypeError(
                    f"the name to register in {self._name!r}: name must be None, an instance of "
                    f"str, or a sequence of str, but got {type(given)}: {given!r}"
                )
        if module is not None:
            self._register_module(module=module, module_name=name, force=force)
            return module

        def register(obj: Any) -> Any:
            self._register_module(module=obj, module_name=name, force=force)
            return obj

        return register

    def _register_module(
        self, module: Any, module_name: str | Iterable[str] | None = None, force: bool = False
    ) -> None:
        if not callable(module):
            raise TypeError(
                f"only classes and functions can be registered in {self._name!r}: module must be "
                f"Callable, but got {type(module)}: {module!r}"
            )
        if module_name is None:
            module_name = getattr(module, "__name__", None)
            if module_name is None:
                raise TypeError(
                    f"{module!r} has no __name__ to register it under in {self._name!r}: pass "
                    "name='...' to register_module"
                )
        names = [module_name] if isinstance(module_name, str) else list(module_name)
        if not force:
            # Checked before registering any, so a failure leaves the registry unchanged.
            if len(set(names)) < len(names):
                repeated = sorted({key for key in names if names.count(key) > 1})
                raise KeyError(
                    f"the names {names!r} to register in the {self._name!r} registry repeat "
                    f"{', '.join(map(repr, repeated))}; pass each name once (or force=True)"
                )
            for key in names:
                if key in self._module_dict:
                    existing = self._module_dict[key]
                    what = getattr(existing, "__qualname__", None) or repr(existing)
                    where = getattr(existing, "__module__", "?")
                    # "NAME is already registered in REGISTRY at MODULE" is MMEngine's phrase.
                    raise KeyError(
                        f"{key} is already registered in {self._name} at {where} (as {what}, "
                        f"scope {self._scope!r}); pass force=True to replace it, or register "
                        "under another name"
                    )
        for key in names:
            self._module_dict[key] = module

    # -- the tree ---------------------------------------------------------------------------

    def _get_root_registry(self) -> Registry:
        root = self
        while root.parent is not None:
            root = root.parent
        return root

    def _add_child(self, registry: Registry) -> None:
        global _generation
        if registry.scope in self._children:
            raise ValueError(
                f"the {self._name!r} registry already has a child of scope {registry.scope!r} "
                f"(registry {self._children[registry.scope].name!r}); a scope can extend a "
                "registry once"
            )
        self._children[registry.scope] = registry
        _generation += 1

    def _search_child(self, scope: str) -> Registry | None:
        """The registry of ``scope`` among this one and its descendants, depth first."""
        if self._scope == scope:
            return self
        for child in self._children.values():
            found = child._search_child(scope)
            if found is not None:
                return found
        return None

    def _registry_of_scope(self, scope: str) -> Registry | None:
        """The registry of ``scope`` in this registry's tree, importing the scope's plugins
        when it has none yet; None when the scope is nowhere."""
        if scope == self._scope:
            return self
        if not scope:
            return None  # '.Name': no registry has an empty scope, and no module to import
        child = self._children.get(scope)
        if child is not None:
            return child
        alias = SCOPE_ALIASES.get(scope)
        if alias is not None and self._get_root_registry()._search_child(scope) is None:
            return self._registry_of_scope(alias)
        root = self._get_root_registry()
        cached = root._scope_cache.get(scope)
        if cached is not None and cached[0] == _generation and cached[1] == _plugins.epoch:
            return cached[2]
        found = root._search_child(scope)
        if found is None:
            _plugins.load_entry_points(scope, self)
            found = root._search_child(scope)
        if found is None:
            _plugins.import_registry_module(scope, self)
            found = root._search_child(scope)
        root._scope_cache[scope] = (_generation, _plugins.epoch, found)
        return found

    # -- searching --------------------------------------------------------------------------

    def import_from_location(self) -> None:
        """Import this registry's ``locations`` and its scope's plugin modules, once (again
        after ``refresh_entry_points()`` for the plugins)."""
        # Each step marks itself done before importing (an imported module may search this
        # registry while it is imported) and undoes the mark when the import fails, so the
        # next search raises the same error instead of going on with half the modules.
        _plugins.load_entry_points(self._scope, self)
        if not self._imported:
            self._imported = True
            import importlib

            for location in self._locations:
                try:
                    importlib.import_module(location)
                except Exception as error:
                    self._imported = False
                    raise ImportError(
                        f"the location {location!r} of the {self._name!r} registry (scope "
                        f"{self._scope!r}) failed to import: {type(error).__name__}: {error}"
                    ) from error
        self._plugins_epoch = _plugins.epoch

    def get(self, key: str) -> Any | None:
        """The object registered as ``key``, or None.

        - ``'Name'``: this registry, then its parents up to the root.
        - ``'scope.Name'``: the registry of that scope anywhere in the tree (its plugins are
          imported if it has none yet), then its parents.
        - a full import path (``'collections.OrderedDict'``, or a module's: ``'os.path'``) when
          no registered name matches, as MMEngine does (a bare name is only ever a registered
          one: ``'os'`` is None).

        Example:
            >>> MODELS = Registry('models', scope='treadle')
            >>> MODELS.get('Missing') is None
            True
        """
        if not isinstance(key, str):
            raise TypeError(
                f"a key of the {self._name!r} registry must be a str, got "
                f"{type(key).__name__}: {key!r}"
            )
        if self._plugins_epoch != _plugins.epoch:
            self.import_from_location()
        if "." not in key:
            obj = self._module_dict.get(key)
            if obj is not None:
                return obj
            parent = self.parent
            while parent is not None:
                if parent._plugins_epoch != _plugins.epoch:
                    parent.import_from_location()
                obj = parent._module_dict.get(key)
                if obj is not None:
                    return obj
                parent = parent.parent
            return None
        scope, _, name = key.partition(".")
        registry = self._registry_of_scope(scope)
        if registry is not None:
            obj = registry.get(name)
            if obj is not None:
                return obj
        from .locate import locate_object

        return locate_object(key, modules=True)

    # -- building ---------------------------------------------------------------------------

    def build(self, cfg: Mapping[str, Any], *args: Any, **kwargs: Any) -> Any:
        """Build the object ``cfg`` describes, with this registry's ``build_func``.

        Example:
            >>> MODELS = Registry('models', scope='treadle')
            >>> MODELS.register_module(module=dict, name='Dict')
            <class 'dict'>
            >>> MODELS.build(dict(type='Dict', a=1))
            {'a': 1}
        """
        return self.build_func(cfg, *args, **kwargs, registry=self)

    def _scoped_registry(self) -> Registry:
        """The registry a build should search: the one of the default scope in this tree,
        or this one when there is no default scope or it has no registry here."""
        scope = current_scope_name()
        if scope is None or scope == self._scope:
            return self
        registry = self._registry_of_scope(scope)
        if registry is not None:
            return registry
        root = self._get_root_registry()
        if scope not in root._scopes_warned:
            root._scopes_warned.add(scope)
            print_log(
                f"the default scope is {scope!r}, but the tree of the {root.name!r} registry "
                f"has no registry of that scope; the {self._name!r} registry (scope "
                f"{self._scope!r}) is used instead. Check that {scope!r} is spelled right and "
                "that its project is installed and creates its registries.",
                logger="current",
                level=logging.WARNING,
            )
        return self

    @contextmanager
    def switch_scope_and_registry(self, scope: str | None) -> Iterator[Registry]:
        """Make ``scope`` the default scope inside a ``with`` block, and give the registry of
        that scope in this registry's tree (this registry if there is none, with a warning).

        Example:
            >>> MODELS = Registry('models', scope='treadle')
            >>> DET_MODELS = Registry('models', parent=MODELS, scope='mydet')
            >>> with MODELS.switch_scope_and_registry('mydet') as registry:
            ...     registry is DET_MODELS
            True
        """
        with DefaultScope.overwrite_default_scope(scope):
            yield self._scoped_registry()
