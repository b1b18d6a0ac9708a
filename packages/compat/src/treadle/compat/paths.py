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
_ALIASES = "treadle.compat.type_aliases"

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
    "mmengine.model.efficient_conv_bn_eval": ("treadle.runner.model.efficient_conv_bn_eval",),
    "mmengine.optim.optimizer": (_OPTIM, "treadle.runner.optim.optimizer"),
    "mmengine.optim.optimizer.builder": (_OPTIM, "treadle.runner.optim.optimizer.builder"),
    "mmengine.optim.scheduler": (_OPTIM, _SCHEDULER),
    "mmengine.optim.scheduler.lr_scheduler": (_OPTIM, _SCHEDULER),
    "mmengine.optim.scheduler.momentum_scheduler": (_OPTIM, _SCHEDULER),
    "mmengine.optim.scheduler.param_scheduler": (_OPTIM, _SCHEDULER),
    "mmengine.runner.checkpoint": (
        "treadle.runner.checkpoint",
        "treadle.runner.checkpoint.model_zoos",
        "treadle.runner.checkpoint.openmmlab_models",
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
    # Private names that toolboxes import.
    ("mmengine.evaluator.metric", "_to_cpu"): "treadle.runner.evaluator.cpu:to_cpu",
    ("mmengine.logging.logger", "_get_device_id"): "treadle.logging.logger",
    ("mmengine.logging.logger", "_get_host_info"): "treadle.logging.logger",
    ("mmengine.config.utils", "_get_package_and_cfg_path"): "treadle.compat.config_utils",
    **{
        ("mmengine.config.utils", name): "treadle.compat.config_utils"
        for name in ("_get_cfg_metainfo", "_get_external_cfg_path", "_get_external_cfg_base_path")
    },
    # MMEngine's AST rewriting of pure-Python configs, for code that runs it itself.
    **{
        ("mmengine.config.utils", name): "treadle.config.import_transformer"
        for name in (
            "ImportTransformer",
            "RemoveAssignFromAST",
            "_gather_abs_import_lazyobj",
            "_is_builtin_module",
        )
    },
    # MMEngine's table of toolboxes (at each path that has it) and config loader's data.
    ("mmengine.config.utils", "MODULE2PACKAGE"): "treadle.compat.config_utils",
    ("mmengine.config.utils", "PKG2PROJECT"): "treadle.compat.config_utils",
    ("mmengine.config.utils", "PYTHON_ROOT_DIR"): "treadle.compat.config_utils",
    ("mmengine.config.utils", "SYSTEM_PYTHON_PREFIX"): "treadle.compat.config_utils",
    ("mmengine.infer.infer", "MODULE2PACKAGE"): "treadle.compat.config_utils",
    ("mmengine.registry.registry", "MODULE2PACKAGE"): "treadle.compat.config_utils",
    ("mmengine.runner.loops", "_InfiniteDataloaderIterator"): "treadle.compat.private_names",
    ("mmengine.fileio.handlers.json_handler", "set_default"): "treadle.compat.private_names",
    ("mmengine.runner.loops", "_parse_losses"): "treadle.compat.private_names",
    ("mmengine.runner.loops", "_update_losses"): "treadle.compat.private_names",
    # Type aliases MMEngine's modules define, which toolboxes import (mmdetection's and
    # mmsegmentation's inferencers: ModelType), and constants its modules import.
    **{
        ("mmengine.infer.infer", name): _ALIASES
        for name in ("InstanceList", "ImgType", "ResType", "ConfigType", "ModelType")
    },
    **{
        (module, name): f"{_ALIASES}:RunnerConfigType" if name == "ConfigType" else _ALIASES
        for module in ("mmengine.runner.runner", "mmengine.runner._flexible_runner")
        for name in ("ConfigType", "ParamSchedulerType", "OptimWrapperType")
    },
    ("mmengine._strategy.base", "ParamSchedulerType"): _ALIASES,
    ("mmengine.optim.scheduler.param_scheduler", "OptimizerType"): _ALIASES,
    **{
        ("mmengine.structures.instance_data", name): _ALIASES
        for name in ("BoolTypeTensor", "LongTypeTensor", "IndexType")
    },
    ("mmengine.model.base_model.data_preprocessor", "CastData"): _ALIASES,
    **{
        ("mmengine.model.test_time_aug", name): _ALIASES
        for name in ("EnhancedBatchInputs", "EnhancedBatchDataSamples", "MergedDataSamples")
    },
    ("mmengine.visualization.visualizer", "VisBackendsType"): _ALIASES,
    **{
        (module, "TORCH_VERSION"): "treadle.runner.utils.dl_utils"
        for module in ("mmengine._strategy", "mmengine.model", "mmengine.model.wrappers")
    },
    ("mmengine.hooks.checkpoint_hook", "inf"): "math",
    ("mmengine.hooks.early_stopping_hook", "inf"): "math",
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
