"""What is registered where: ``traverse_registry_tree`` and ``count_registered_modules``."""

from __future__ import annotations

import os

from treadle.logging import print_log

from . import registry as _registry_module
from .registry import Registry

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


def traverse_registry_tree(registry: Registry, verbose: bool = True) -> list[dict[str, Any]]:
    """Describe every registry in ``registry``'s tree, from its root, depth first.

    Each registry gives a dict with ``num_modules``, ``scope`` and, for each folder of source
    ('mydet/models' for module 'mydet.models.resnet'), the names registered from it.

    Example:
        >>> MODELS = Registry('models', scope='treadle')
        >>> traverse_registry_tree(MODELS, verbose=False)
        [{'num_modules': 0, 'scope': 'treadle'}]
    """
    if not isinstance(registry, Registry):
        raise TypeError(f"traverse_registry_tree needs a Registry, got {type(registry).__name__}")
    found: list[dict[str, Any]] = []
    pending = [registry.root]
    while pending:
        node = pending.pop()
        info: dict[str, Any] = {"num_modules": len(node.module_dict), "scope": node.scope}
        for name, obj in node.module_dict.items():
            module = getattr(obj, "__module__", None) or type(obj).__module__
            folder = "/".join(module.split(".")[:-1])
            info.setdefault(folder, []).append(name)
        if verbose:
            print_log(
                f"{len(node.module_dict)} modules in the {node.name!r} registry of scope "
                f"{node.scope!r}",
                logger="current",
            )
        found.append(info)
        pending.extend(reversed(list(node.children.values())))
    return found


def _root_registries() -> dict[str, Registry]:
    """The root registries alive in this process, by name (scope added where names repeat)."""
    roots = sorted(_registry_module._roots, key=lambda r: (r.name, r.scope))
    named: dict[str, Registry] = {}
    for root in roots:
        key = root.name if root.name not in named else f"{root.name} ({root.scope})"
        suffix = 2
        while key in named:
            key, suffix = f"{root.name} ({root.scope}) #{suffix}", suffix + 1
        named[key] = root
    return named


def count_registered_modules(
    save_path: str | None = None,
    verbose: bool = True,
    registries: dict[str, Registry] | Iterable[Registry] | None = None,
) -> dict[str, Any]:
    """Count what is registered in the trees of the root registries.

    MMEngine scans its own root registries; treadle's roots live in the packages that own them
    (treadle.runner, treadle.visual), so this scans ``registries`` (a dict by name, or
    registries named by their ``name``), or by default every root registry the process has
    created. With ``save_path``, the result is also written to
    ``save_path/modules_statistic_results.json``.

    Example:
        >>> MODELS = Registry('models', scope='treadle')
        >>> count_registered_modules(verbose=False, registries={'MODELS': MODELS})['registries']
        {'MODELS': [{'num_modules': 0, 'scope': 'treadle'}]}
    """
    if registries is None:
        chosen = _root_registries()
    elif isinstance(registries, dict):
        chosen = dict(registries)
    else:
        chosen = {registry.name: registry for registry in registries}
    import datetime

    scan = {
        "scan_date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
        "registries": {
            name: traverse_registry_tree(registry, verbose) for name, registry in chosen.items()
        },
    }
    if verbose:
        print_log(f"registered modules: {scan}", logger="current")
    if save_path is not None:
        import json

        path = os.path.join(save_path, "modules_statistic_results.json")
        _write_atomically(path, json.dumps(scan, indent=2))
        if verbose:
            print_log(f"registered modules saved to {path}", logger="current")
    return scan


def _write_atomically(path: str, text: str) -> None:
    """Write a temporary file beside ``path`` and rename it: a crash leaves no half file."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    temporary = f"{path}.tmp-{os.getpid()}"
    try:
        with open(temporary, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
