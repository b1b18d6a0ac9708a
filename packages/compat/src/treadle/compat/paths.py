"""Which treadle modules provide the names of each MMEngine 0.10.7 module path.

A path not listed in :data:`SOURCES` uses its longest listed parent: ``mmengine.hooks.logger_hook``
finds its names in ``treadle.runner.hooks`` (through ``mmengine.hooks``) after
``treadle.runner.hooks.logger_hook``.
"""

from __future__ import annotations

from treadle.runner.porting import MODULE_MAP, NAME_MOVES

#: Looked up last, only for names MMEngine has at a path because its module imports them there
#: (the root registries, TORCH_VERSION, typing's names).
COMMON: tuple[str, ...] = (
    "treadle.runner.registry",
    "treadle.runner.utils.dl_utils",
    "treadle.compat.extras",
)

_ANALYSIS = "treadle.runner.analysis"
_OPTIM = "treadle.runner.optim"
_SCHEDULER = "treadle.runner.optim.scheduler"

#: treadle modules searched in order, by MMEngine module.
SOURCES: dict[str, tuple[str, ...]] = {
    **{module: (target,) for module, target in MODULE_MAP.items()},
    "mmengine": ("treadle.runner.mmengine_names",),
    "mmengine._strategy.colossalai": (
        "treadle.runner.strategies.colossalai",
        "treadle.runner.strategies",
        "treadle.runner.strategies.colossalai_model_wrapper",
        "treadle.runner.optim.optimizer.colossalai_optim_wrapper",
    ),
    "mmengine._strategy.deepspeed": (
        "treadle.runner.strategies.deepspeed",
        "treadle.runner.strategies",
        "treadle.runner.model.wrappers.deepspeed",
        "treadle.runner.optim.optimizer.deepspeed_optim_wrapper",
    ),
    "mmengine.analysis.jit_analysis": (_ANALYSIS, "treadle.runner.analysis.model_analysis"),
    "mmengine.analysis.jit_handles": (_ANALYSIS, "treadle.runner.analysis.handles"),
    "mmengine.analysis.print_helper": (_ANALYSIS, "treadle.runner.analysis.print_helper"),
    "mmengine.analysis.complexity_analysis": (
        _ANALYSIS,
        "treadle.runner.analysis.complexity_analysis",
    ),
    "mmengine.config.config": ("treadle.config", "treadle.config.loader", "treadle.config.merge"),
    "mmengine.device.utils": ("treadle.runner.device", "treadle.compat.device_constants"),
    "mmengine.fileio.handlers": ("treadle.fileio.handlers", "treadle.fileio"),
    "mmengine.hooks.logger_hook": ("treadle.runner.hooks", "treadle.runner.hooks.logger_hook"),
    "mmengine.hooks.profiler_hook": ("treadle.runner.hooks", "treadle.compat.extras"),
    "mmengine.logging.logger": ("treadle.logging", "treadle.compat.logging_names"),
    "mmengine.optim.optimizer": (_OPTIM, "treadle.runner.optim.optimizer"),
    "mmengine.optim.optimizer.builder": (_OPTIM, "treadle.runner.optim.optimizer.builder"),
    "mmengine.optim.scheduler": (_OPTIM, _SCHEDULER),
    "mmengine.optim.scheduler.lr_scheduler": (_OPTIM, _SCHEDULER),
    "mmengine.optim.scheduler.momentum_scheduler": (_OPTIM, _SCHEDULER),
    "mmengine.optim.scheduler.param_scheduler": (_OPTIM, _SCHEDULER),
    "mmengine.runner.checkpoint": (
        "treadle.runner.checkpoint",
        "treadle.runner.checkpoint.model_zoos",
    ),
    "mmengine.runner.utils": ("treadle.runner", "treadle.runner.loops"),
    "mmengine.testing._internal": ("treadle.compat.testing_internal",),
    "mmengine.testing._internal.distributed": ("treadle.compat.testing_internal",),
    "mmengine.testing.runner_test_case": (
        "treadle.runner.testing",
        "treadle.runner.testing.runner_test_case",
    ),
    "mmengine.utils.dl_utils.parrots_wrapper": ("treadle.compat.parrots_wrapper",),
    "mmengine.utils.dl_utils.setup_env": (
        "treadle.runner.utils.dl_utils",
        "treadle.runner.runner.env",
    ),
    "mmengine.utils.dl_utils.collect_env": (
        "treadle.runner.utils.dl_utils",
        "treadle.runner.runner.env",
    ),
    "mmengine.version": ("treadle.compat.versions",),
    "mmengine.visualization.utils": ("treadle.visual.utils", "treadle.visual"),
    "mmengine.visualization.vis_backend": ("treadle.visual", "treadle.runner.hooks.logger_hook"),
}

#: Single names whose treadle home is not one of the path's sources:
#: ``(mmengine module, name) -> 'treadle.module[:attribute[.attribute]]'``. They come before a
#: submodule of the same name, as in MMEngine's packages that import a function over it.
NAMES: dict[tuple[str, str], str] = {
    **NAME_MOVES,
    ("mmengine.config.config", "DEPRECATION_KEY"): "treadle.config.loader",
    ("mmengine.config.config", "DELETE_KEY"): "treadle.config.config_dict",
    ("mmengine.registry.build_functions", "build_optimizer_from_cfg"): (
        "treadle.runner.registry:OPTIMIZERS.build_func"
    ),
}


def sources(module: str) -> tuple[str, ...]:
    """The treadle modules that provide ``module``'s names: its own entry, then its parents'."""
    if module == "mmengine":
        return SOURCES["mmengine"]
    parts = module.split(".")
    found: list[str] = []
    # Not down to "mmengine" itself: its names are the top-level ones only.
    for end in range(len(parts), 1, -1):
        for source in SOURCES.get(".".join(parts[:end]), ()):
            if source not in found:
                found.append(source)
    return tuple(found)
