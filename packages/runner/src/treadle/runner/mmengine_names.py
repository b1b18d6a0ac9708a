"""MMEngine's top-level names in one place: a drop-in for ``import mmengine`` when porting.

``mmengine`` re-exports the public names of its config, fileio, logging, registry and utils
modules; this module re-exports the public names of their treadle counterparts (treadle.config,
treadle.fileio, treadle.logging, treadle.runner.registry, treadle.runner.utils), so that

    import treadle.runner.mmengine_names as mmengine
    from treadle.runner.mmengine_names import Config, MODELS, print_log

work as ``import mmengine`` and ``from mmengine import Config, MODELS, print_log`` did. MMEngine's
subpackages are attributes too (``mmengine.dist.get_rank()``, ``from ... import fileio``), each
the treadle module :data:`SUBMODULES` names, imported on first use.

``__version__`` is the MMEngine version whose API treadle follows ("0.10.7"), since downstream
packages compare it against their minimum MMEngine version; treadle's own version is
``treadle_version``.

Example:
    >>> import treadle.runner.mmengine_names as mmengine
    >>> mmengine.Config(dict(a=1)).a
    1
    >>> mmengine.dist.get_rank()
    0
"""

from __future__ import annotations

import importlib
from typing import Any

import treadle.config
import treadle.fileio
import treadle.logging
import treadle.runner.registry
import treadle.runner.utils

#: The MMEngine version whose public API treadle follows.
__version__ = "0.10.7"
#: treadle-runner's own version.
treadle_version: str = treadle.runner.__version__
version_info = (0, 10, 7)

# In MMEngine's order, so that a name two of them export comes from the later one, as there.
_SOURCES = (
    treadle.config,
    treadle.fileio,
    treadle.logging,
    treadle.runner.registry,
    treadle.runner.utils,
)


def _public_names(module: Any) -> list[str]:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name in vars(module) if not name.startswith("_")]
    return [name for name in names if not name.startswith("_")]


_names: dict[str, Any] = {}
# Names a source module itself loads on first use (VISUALIZERS from treadle.visual): so are they
# here, by the module to ask.
_lazy: dict[str, Any] = {}
for _module in _SOURCES:
    for _name in _public_names(_module):
        if _name in vars(_module):
            _names[_name] = vars(_module)[_name]
            _lazy.pop(_name, None)
        else:
            _lazy[_name] = _module
            _names.pop(_name, None)
globals().update(_names)

#: ``mmengine.X`` subpackages, by X, and the treadle module that stands in for each (the same
#: as treadle.runner.porting.MODULE_MAP; a test keeps the two equal).
SUBMODULES: dict[str, str] = {
    "analysis": "treadle.runner.analysis",
    "config": "treadle.config",
    "dataset": "treadle.runner.dataset",
    "device": "treadle.runner.device",
    "dist": "treadle.dist",
    "evaluator": "treadle.runner.evaluator",
    "fileio": "treadle.fileio",
    "hooks": "treadle.runner.hooks",
    "hub": "treadle.runner.hub",
    "infer": "treadle.runner.infer",
    "logging": "treadle.logging",
    "model": "treadle.runner.model",
    "optim": "treadle.runner.optim",
    "registry": "treadle.runner.registry",
    "runner": "treadle.runner",
    "structures": "treadle.runner.structures",
    "testing": "treadle.runner.testing",
    "utils": "treadle.runner.utils",
    "visualization": "treadle.visual",
    "version": __name__,
}

__all__ = sorted([*_names, *_lazy, *SUBMODULES, "__version__", "version_info", "treadle_version"])
del _module, _name


def __getattr__(name: str) -> Any:
    source = _lazy.get(name)
    if source is not None:
        value = getattr(source, name)
        globals()[name] = value
        return value
    target = SUBMODULES.get(name)
    if target is None:
        raise AttributeError(
            f"treadle.runner.mmengine_names has no {name!r}: MMEngine's top-level names are "
            f"those of treadle.config, treadle.fileio, treadle.logging, treadle.runner.registry "
            f"and treadle.runner.utils, and its subpackages {', '.join(sorted(SUBMODULES))}"
        )
    module = importlib.import_module(target)
    globals()[name] = module  # imported once
    return module


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_lazy) | set(SUBMODULES))
