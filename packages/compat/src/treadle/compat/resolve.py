"""Where each MMEngine name lives in treadle: the lookup behind every ``mmengine.X.name``.

For ``mmengine.X.Y``'s attribute ``name``, in order:

1. the single-name homes of :data:`treadle.compat.paths.NAMES`;
2. an MMEngine submodule ``mmengine.X.Y.name`` (imported through the hook);
3. the treadle modules :func:`treadle.compat.paths.sources` gives for the path;
4. for a name MMEngine has at that path only: the names MMEngine modules re-export from
   elsewhere (its registries, ``TORCH_VERSION``, typing helpers): :data:`paths.COMMON`.

A public MMEngine name found nowhere is a :class:`MissingNameError` (an ImportError) naming the
module, the name, why treadle leaves it out and where the coverage table is.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from .missing import reason_for
from .mmengine_0_10_7 import MODULES
from .patching import NOT_FOUND as _NOT_FOUND
from .patching import mmengine_has, module_global
from .paths import COMMON, NAMES, sources

COVERAGE_HINT = (
    "The coverage table of treadle.compat (its documentation, 'Coverage') lists every module and "
    "name of MMEngine 0.10.7 that treadle provides and why each missing one is left out."
)


class MissingNameError(ImportError):
    """An MMEngine 0.10.7 name that treadle does not provide.

    Example:
        >>> import treadle.compat
        >>> treadle.compat.install()
        >>> from mmengine.utils.path import find_vcs_root  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        treadle.compat.resolve.MissingNameError: mmengine.utils.path.find_vcs_root is ...
    """


def _attribute(module_name: str, attr: str) -> Any:
    value: Any = importlib.import_module(module_name)
    try:
        for part in attr.split("."):
            value = getattr(value, part)
    except AttributeError:
        return _NOT_FOUND
    return value


def find(module: str, name: str) -> Any:
    """The treadle object for ``name`` at MMEngine path ``module``, or a sentinel."""
    if name not in _public(module):
        # What MMEngine's module imports or keeps private: the object treadle's code behind
        # the path uses, so that mock.patch at the path changes it (treadle.compat.patching).
        value = module_global(module, name)
        if value is not _NOT_FOUND:
            return value
    home = NAMES.get((module, name))
    if home is not None:
        target, _, attr = home.partition(":")
        return _attribute(target, attr or name)
    submodule = f"{module}.{name}"
    if submodule in MODULES:
        return importlib.import_module(submodule)
    for source in sources(module):
        value = _attribute(source, name)
        if value is not _NOT_FOUND:
            return value
    if name in _public(module):
        for source in COMMON:
            value = _attribute(source, name)
            if value is not _NOT_FOUND:
                return value
    return _NOT_FOUND


def resolve(module: str, name: str) -> Any:
    """``mmengine.X.Y.name`` made of treadle; raises MissingNameError / AttributeError."""
    value = find(module, name)
    if value is not _NOT_FOUND:
        return value
    if name in _public(module):
        raise MissingNameError(
            f"{module}.{name} is not provided by treadle (treadle.compat): "
            f"{reason_for(module, name) or 'not yet implemented in treadle'}. {COVERAGE_HINT}",
            name=module,
        )
    if mmengine_has(module, name):
        raise AttributeError(
            f"module {module!r} has no attribute {name!r}: MMEngine 0.10.7's module has it (an "
            f"import or a private name), treadle.compat does not provide it. {COVERAGE_HINT}"
        )
    raise AttributeError(
        f"module {module!r} has no attribute {name!r} (neither has MMEngine 0.10.7's)"
    )


@cache
def _public(module: str) -> frozenset[str]:
    entry = MODULES.get(module)
    return frozenset(entry[1]) if entry else frozenset()


def public_names(module: str, provided_only: bool = False) -> list[str]:
    """MMEngine 0.10.7's public names at ``module``; with ``provided_only``, those treadle has."""
    names = sorted(_public(module))
    if not provided_only:
        return names
    return [name for name in names if _provided(module, name)]


def _provided(module: str, name: str) -> bool:
    try:
        return find(module, name) is not _NOT_FOUND
    except ImportError:  # an optional dependency behind the name
        return False
