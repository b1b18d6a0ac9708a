"""``count_registered_modules`` over treadle's root registries, as MMEngine's counts its own."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from treadle.registry import Registry
from treadle.registry import count_registered_modules as _count_in

from . import root


def root_registries() -> dict[str, Registry]:
    """treadle's root registries by their constant's name (MODELS, HOOKS, ..., VISBACKENDS)."""
    from treadle.visual.registry import VISBACKENDS, VISUALIZERS

    found = {name: value for name, value in vars(root).items() if isinstance(value, Registry)}
    found.update(VISUALIZERS=VISUALIZERS, VISBACKENDS=VISBACKENDS)
    return found


def count_registered_modules(
    save_path: str | None = None,
    verbose: bool = True,
    registries: dict[str, Registry] | Iterable[Registry] | None = None,
) -> dict[str, Any]:
    """Count what is registered in treadle's root registries and their children.

    Without ``registries`` this scans every root registry of treadle (MODELS, HOOKS, ...), as
    MMEngine's function scans MMEngine's; ``save_path`` also writes
    ``save_path/modules_statistic_results.json``.

    Example:
        >>> scan = count_registered_modules(verbose=False)
        >>> 'MODELS' in scan['registries'] and 'VISBACKENDS' in scan['registries']
        True
    """
    return _count_in(save_path, verbose, root_registries() if registries is None else registries)
