"""treadle.registry: registries that build objects from configs, with scopes and plugins.

The API follows MMEngine 0.10's ``mmengine.registry``: ``from mmengine.registry import
Registry`` becomes ``from treadle.registry import Registry``. The root registries (MODELS,
HOOKS, ...) live in the packages that own what they hold, treadle.runner and treadle.visual.
"""

from .build_functions import build_from_cfg
from .default_scope import DefaultScope, init_default_scope
from .entry_points import ENTRY_POINT_GROUP, refresh_entry_points
from .registry import Registry
from .utils import count_registered_modules, traverse_registry_tree

__version__ = "0.1.1"

__all__ = [
    "ENTRY_POINT_GROUP",
    "DefaultScope",
    "Registry",
    "__version__",
    "build_from_cfg",
    "count_registered_modules",
    "init_default_scope",
    "refresh_entry_points",
    "traverse_registry_tree",
]
