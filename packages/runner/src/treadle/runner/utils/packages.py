"""Is a package installed, and where. Answers come from the installed distributions' metadata
(``importlib.metadata``, imported on first use: it takes longer to import than the rest of
this package) and the import system (``find_spec``); the package asked about is never imported."""

from __future__ import annotations

import importlib.util
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from importlib.metadata import Distribution


def _find_spec(module_name: str) -> ModuleSpec | None:
    try:
        return importlib.util.find_spec(module_name)
    except (ImportError, ValueError):  # a parent that is not a package, an empty name
        return None


def is_installed(package: str) -> bool:
    """Whether ``package`` is installed: a distribution by that name ('PyYAML'), or an importable
    top-level module ('yaml').

    Example:
        >>> is_installed('pip'), is_installed('surely-not-installed')
        (True, False)
    """
    import importlib.metadata

    try:
        importlib.metadata.distribution(package)
        return True
    except importlib.metadata.PackageNotFoundError:
        return _find_spec(package) is not None


def _is_private(module: str) -> bool:
    return module.startswith("_")


def _top_level_module(distribution: Distribution, package: str) -> str:
    """The module a distribution installs: its top_level.txt, else the package that the
    installed files map to it, else the distribution name as a module name."""
    # PyYAML lists '_yaml' and 'yaml': the public module is the one without the underscore.
    modules = sorted((distribution.read_text("top_level.txt") or "").split(), key=_is_private)
    if modules:
        return modules[0]
    import importlib.metadata

    for module, names in importlib.metadata.packages_distributions().items():
        if distribution.metadata["Name"] in names and not module.startswith("_"):
            return module
    return package.replace("-", "_")


def _module_folder(module_name: str) -> str | None:
    spec = _find_spec(module_name)
    if spec is None:
        return None
    if spec.submodule_search_locations:  # a package: its folder (the first one of a namespace)
        return next(iter(spec.submodule_search_locations))
    return spec.origin and os.path.dirname(spec.origin)


def get_installed_path(package: str) -> str:
    """The folder ``package`` is installed in: the folder of its top-level module, found by
    distribution name ('PyYAML') or module name ('yaml').

    Example:
        >>> get_installed_path('pip')  # doctest: +SKIP
        '/usr/lib/python3/site-packages/pip'
    """
    import importlib.metadata

    try:
        distribution = importlib.metadata.distribution(package)
    except importlib.metadata.PackageNotFoundError:
        distribution = None
    module_name = package if distribution is None else _top_level_module(distribution, package)
    folder = _module_folder(module_name)
    if folder is not None:
        return folder
    if distribution is not None:
        return os.path.join(str(distribution.locate_file("")), module_name)
    raise importlib.metadata.PackageNotFoundError(
        f"get_installed_path: {package!r} is neither an installed distribution nor an "
        "importable module"
    )
