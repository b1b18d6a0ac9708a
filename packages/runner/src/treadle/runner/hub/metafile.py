"""Model indexes shipped inside packages: ``model-index.yml`` and the metafiles it imports.

An OpenMMLab-style package lists its models in ``model-index.yml``::

    Import:
      - configs/resnet/metafile.yml

and each metafile in ``Models:`` entries with a ``Name``, optional ``Alias`` (a name or a list),
a ``Config`` path relative to the index and ``Weights`` (a path or URL, or a list of them).
The index is looked for where MIM installs it (``<package>/.mim/``), in the package folder, and
in a source checkout (the folder above the package, when it holds ``configs/``).
"""

from __future__ import annotations

import difflib
import importlib
import os
import re
from collections.abc import Iterator
from typing import Any

INDEX_NAME = "model-index.yml"


def split_package_path(path: str) -> tuple[str, str]:
    """``'pkg::rel/path.py'`` as ``('pkg', 'rel/path.py')``; errors name ``path``."""
    if not isinstance(path, str):
        raise TypeError(f"a package config path must be a str, got {type(path).__name__}")
    package, sep, relative = path.partition("::")
    if not sep or not package or not relative or "::" in relative:
        raise ValueError(
            f"{path!r} is not a package path: write 'package::path/to/config.py' "
            "(one '::' between the package's import name and the path inside it)"
        )
    return package, relative


def package_folder(package: str) -> str:
    """The folder of the installed package ``package`` (an import name), importing it: a
    package registers its modules and checkpoint schemes on import, as MMEngine expects."""
    try:
        module = importlib.import_module(package)
    except ModuleNotFoundError as err:
        if err.name != package and not package.startswith(f"{err.name}."):
            raise
        raise ModuleNotFoundError(
            f"the package {package!r} is not installed (nor on sys.path): install it with pip; "
            "treadle never installs packages by itself",
            name=package,
        ) from None
    paths = list(getattr(module, "__path__", ()))
    if not paths:
        raise ValueError(f"{package!r} is a module, not a package: it cannot ship configs")
    return paths[0]


def _candidates(folder: str) -> list[str]:
    checkout = os.path.dirname(folder)
    found = [os.path.join(folder, ".mim"), folder]
    # A source checkout (pip install -e, or PYTHONPATH) keeps configs/ beside the package.
    if os.path.isdir(os.path.join(checkout, "configs")):
        found.insert(0, checkout)
    return found


def find_index_root(package: str, required: bool = True) -> str | None:
    """The folder holding ``package``'s ``model-index.yml`` (paths in it are relative to it);
    None when there is none and ``required`` is False."""
    folder = package_folder(package)
    tried = _candidates(folder)
    for candidate in tried:
        if os.path.isfile(os.path.join(candidate, INDEX_NAME)):
            return candidate
    if not required:
        return None
    raise FileNotFoundError(
        f"the package {package!r} has no {INDEX_NAME} (looked in {', '.join(tried)}): it does "
        "not list its models"
    )


def iter_models(root: str) -> Iterator[dict[str, Any]]:
    """Every model entry of the metafiles that ``root/model-index.yml`` imports, in order."""
    from treadle.fileio import load

    index_path = os.path.join(root, INDEX_NAME)
    index = load(index_path)
    imports = index.get("Import") if isinstance(index, dict) else None
    if not isinstance(imports, list):
        raise ValueError(f"{index_path}: expected an 'Import' list of metafile paths")
    for relative in imports:
        metafile = os.path.join(root, relative)
        if not os.path.isfile(metafile):
            raise FileNotFoundError(f"{index_path} imports {relative!r}, which does not exist")
        models = (load(metafile) or {}).get("Models") or []
        for model in models:
            if not isinstance(model, dict) or "Name" not in model:
                raise ValueError(f"{metafile}: every entry of 'Models' needs a 'Name'")
            yield model


def names_of(model: dict[str, Any]) -> list[str]:
    """A model entry's name followed by its aliases."""
    aliases = model.get("Alias") or []
    if isinstance(aliases, str):
        aliases = [aliases]
    return [str(model["Name"]), *(str(alias) for alias in aliases)]


def first_weights(model: dict[str, Any]) -> str | None:
    """The entry's weights (the first of a list), or None."""
    weights = model.get("Weights")
    if isinstance(weights, (list, tuple)):
        weights = weights[0] if weights else None
    return weights


def find_model(root: str, name: str, package: str) -> dict[str, Any]:
    """The entry called ``name`` (its Name or an Alias, case-insensitive)."""
    wanted = name.lower()
    known: list[str] = []
    for model in iter_models(root):
        names = names_of(model)
        if wanted in (n.lower() for n in names):
            if "Config" not in model:
                raise ValueError(
                    f"the model {name!r} of {package!r} has no 'Config' in its metafile"
                )
            return model
        known.extend(names)
    close = difflib.get_close_matches(name, known, n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise ValueError(
        f"no model called {name!r} in the metafiles of {package!r} ({len(known)} names){hint}"
    )


def find_config_entry(root: str, relative: str) -> dict[str, Any] | None:
    """The first entry whose ``Config`` is ``relative`` below its top folder (``configs/``):
    ``'resnet/r50.py'`` finds ``Config: configs/resnet/r50.py``."""
    wanted = os.path.normpath(relative)
    for model in iter_models(root):
        config = model.get("Config")
        if config and os.path.normpath(str(config).partition("/")[2]) == wanted:
            return model
    return None


def match_names(root: str, pattern: str) -> list[str]:
    """Names and aliases of ``root``'s models that ``re.match`` ``pattern``, in order."""
    regex = re.compile(pattern)
    return [name for model in iter_models(root) for name in names_of(model) if regex.match(name)]
