"""Plugin discovery: the modules that downstream distributions register into a scope.

A distribution declares, in its pyproject.toml::

    [project.entry-points."treadle.registry"]
    mydet = "mydet.registry_plugins"

The entry point's name is a scope, its value a module that creates the scope's child registries
and registers into them. A registry imports those modules the first time it is searched, and
a lookup that names a scope (``'mydet.Thing'``, ``_scope_``, a default scope) imports them when
that scope has no registry yet. Downstream configs then need neither ``custom_imports`` nor
``locations``.

The installed entry points are read once per process (``importlib.metadata`` is slow to
import and to scan); ``refresh_entry_points()`` reads them again, after installing a
distribution into a running process.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from .registry import Registry

ENTRY_POINT_GROUP = "treadle.registry"

# Bumped by refresh_entry_points: registries compare it with the value they last saw, so a
# refresh makes each of them look for plugins again.
epoch = 0
_entry_points_by_scope: dict[str, list[EntryPoint]] | None = None
# Scopes whose entry points were imported (or are being imported: marked first, so that a
# plugin module that searches a registry while it is imported does not import itself again).
_loaded_scopes: set[str] = set()
# Scopes for which a '{scope}.registry' module was looked for.
_registry_modules_tried: set[str] = set()


def refresh_entry_points() -> None:
    """Read the installed entry points again on the next lookup.

    Call it after installing or removing a distribution while the process runs (a notebook, a
    test). Registries then look for plugins of every scope again; modules imported before stay
    imported.

    Example:
        >>> import subprocess, sys
        >>> subprocess.run([sys.executable, '-m', 'pip', 'install', 'mydet'])  # doctest: +SKIP
        >>> refresh_entry_points()
    """
    global _entry_points_by_scope, epoch
    import importlib

    # The finders cache directory listings: a distribution installed a moment ago would stay
    # invisible to importlib.metadata without this.
    importlib.invalidate_caches()
    _entry_points_by_scope = None
    _loaded_scopes.clear()
    _registry_modules_tried.clear()
    epoch += 1


def declared_entry_points() -> dict[str, list[EntryPoint]]:
    """The entry points of the group ``treadle.registry``, by scope."""
    global _entry_points_by_scope
    if _entry_points_by_scope is None:
        from importlib.metadata import entry_points

        by_scope: dict[str, list[EntryPoint]] = {}
        for entry_point in entry_points(group=ENTRY_POINT_GROUP):
            by_scope.setdefault(entry_point.name, []).append(entry_point)
        _entry_points_by_scope = by_scope
    return _entry_points_by_scope


def load_entry_points(scope: str, registry: Registry) -> None:
    """Import the plugin modules declared for ``scope``, once; ``registry`` is the one whose
    search asked for them, named in the error when one fails."""
    if scope in _loaded_scopes:
        return
    _loaded_scopes.add(scope)
    for entry_point in declared_entry_points().get(scope, ()):
        try:
            entry_point.load()
        except Exception as error:
            # Not marked as loaded: the next search fails the same way instead of going on
            # with half the plugins registered.
            _loaded_scopes.discard(scope)
            dist = getattr(entry_point, "dist", None)
            dist_name = f"distribution {dist.name!r}" if dist is not None else "a distribution"
            raise ImportError(
                f"the plugin module {entry_point.value!r} (entry point {entry_point.name!r} of "
                f"{dist_name}, group {ENTRY_POINT_GROUP!r}) failed to import while the "
                f"{registry.name!r} registry (scope {registry.scope!r}) looked for scope "
                f"{scope!r}: {type(error).__name__}: {error}"
            ) from error


def import_registry_module(scope: str, registry: Registry) -> None:
    """Import ``{scope}.registry`` once, if it exists: where MMEngine-style projects
    (``mmdet/registry.py``) create their child registries."""
    if scope in _registry_modules_tried:
        return
    _registry_modules_tried.add(scope)
    import importlib

    module_name = f"{scope}.registry"
    try:
        importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        # The project, or its registry module, is not there: nothing to import. A module
        # missing further down (a dependency of the registry module) is a real failure.
        if error.name not in (scope, module_name):
            _registry_modules_tried.discard(scope)
            raise _registry_module_error(scope, registry, error) from error
    except Exception as error:
        _registry_modules_tried.discard(scope)
        raise _registry_module_error(scope, registry, error) from error


def _registry_module_error(scope: str, registry: Registry, error: Exception) -> ImportError:
    return ImportError(
        f"the module '{scope}.registry' failed to import while the {registry.name!r} registry "
        f"(scope {registry.scope!r}) looked for the registries of scope {scope!r}: "
        f"{type(error).__name__}: {error}"
    )
