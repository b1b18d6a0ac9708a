"""``'pkg::path/to/cfg.py'``: configs shipped inside installed packages.

The package is found without importing it (``importlib.util.find_spec``); the config is looked up
in ``<pkg>/.mim/configs/<path>`` (where MIM installs configs) then ``<pkg>/configs/<path>``.
"""

from __future__ import annotations

import os

from .errors import ConfigFileNotFoundError


def is_package_path(path: str) -> bool:
    return "::" in path


def package_dir(package: str) -> str | None:
    """The folder of an installed (or importable) package, or None; imports nothing."""
    import importlib.util

    top = package.split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    folder = None
    if spec.submodule_search_locations:
        folder = next(iter(spec.submodule_search_locations))
    elif spec.origin:
        folder = os.path.dirname(spec.origin)
    if folder is None:
        return None
    return os.path.join(folder, *package.split(".")[1:])


def resolve_package_path(path: str, filename: str | None = None, lineno: int | None = None) -> str:
    """The file ``'pkg::rel/path.py'`` names. ``filename``/``lineno`` locate errors."""
    package, _, relative = path.partition("::")
    if not package or not relative or "::" in relative:
        raise ConfigFileNotFoundError(
            f"{path!r} is not a package config path: write 'package::path/to/config.py'",
            filename,
            lineno,
        )
    folder = package_dir(package)
    if folder is None:
        raise ConfigFileNotFoundError(
            f"{path!r}: package {package!r} is not installed (nor on sys.path)", filename, lineno
        )
    tried = [
        os.path.join(folder, ".mim", "configs", relative),
        os.path.join(folder, "configs", relative),
    ]
    for candidate in tried:
        if os.path.isfile(candidate):
            return candidate
    raise ConfigFileNotFoundError(
        f"{path!r}: no such config in package {package!r} (looked in {', '.join(tried)})",
        filename,
        lineno,
    )
