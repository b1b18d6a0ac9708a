"""treadle.runner.registry: the root registries of the training engine and their helpers.

The API follows MMEngine 0.10's ``mmengine.registry``: ``from mmengine.registry import MODELS``
becomes ``from treadle.runner.registry import MODELS``. The generic pieces (Registry,
build_from_cfg, DefaultScope, ...) come from treadle.registry and are re-exported here.
VISUALIZERS and VISBACKENDS belong to treadle.visual; they are re-exported on first access, so
importing this module loads neither torch nor matplotlib.
"""

from __future__ import annotations

from typing import Any

from treadle.registry import (
    DefaultScope,
    Registry,
    build_from_cfg,
    init_default_scope,
    traverse_registry_tree,
)

from .build_functions import build_model_from_cfg, build_runner_from_cfg, build_scheduler_from_cfg
from .root import (
    DATA_SAMPLERS,
    DATASETS,
    EVALUATOR,
    FUNCTIONS,
    HOOKS,
    INFERENCERS,
    LOG_PROCESSORS,
    LOOPS,
    METRICS,
    MODEL_WRAPPERS,
    MODELS,
    OPTIM_WRAPPER_CONSTRUCTORS,
    OPTIM_WRAPPERS,
    OPTIMIZERS,
    PARAM_SCHEDULERS,
    RUNNER_CONSTRUCTORS,
    RUNNERS,
    STRATEGIES,
    TASK_UTILS,
    TRANSFORMS,
    WEIGHT_INITIALIZERS,
)
from .utils import count_registered_modules

__all__ = [
    "DATASETS",
    "DATA_SAMPLERS",
    "EVALUATOR",
    "FUNCTIONS",
    "HOOKS",
    "INFERENCERS",
    "LOG_PROCESSORS",
    "LOOPS",
    "METRICS",
    "MODELS",
    "MODEL_WRAPPERS",
    "OPTIMIZERS",
    "OPTIM_WRAPPERS",
    "OPTIM_WRAPPER_CONSTRUCTORS",
    "PARAM_SCHEDULERS",
    "RUNNERS",
    "RUNNER_CONSTRUCTORS",
    "STRATEGIES",
    "TASK_UTILS",
    "TRANSFORMS",
    "VISBACKENDS",
    "VISUALIZERS",
    "WEIGHT_INITIALIZERS",
    "DefaultScope",
    "Registry",
    "build_from_cfg",
    "build_model_from_cfg",
    "build_runner_from_cfg",
    "build_scheduler_from_cfg",
    "count_registered_modules",
    "init_default_scope",
    "traverse_registry_tree",
]


def __getattr__(name: str) -> Any:
    # treadle.visual imports matplotlib; pay for it only when its registries are asked for.
    if name in ("VISUALIZERS", "VISBACKENDS"):
        from treadle.visual import registry as visual_registry

        return getattr(visual_registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
