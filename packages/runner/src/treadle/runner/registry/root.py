"""The root registries of the training engine, with MMEngine 0.10's names.

Each registry lists, in ``locations``, the modules that register its built-in types; they are
imported the first time the registry is searched, so ``DATASETS.build(dict(type=...))`` finds a
built-in dataset with nothing imported first. A downstream project makes children of these
(``Registry('model', parent=MODELS, scope='mydet')``), exactly as with MMEngine.

A location is added here when the subpackage that fills the registry exists; a registry whose
subpackage has not landed yet has none, so searching it never fails on a missing module.
"""

from __future__ import annotations

from treadle.registry import Registry

from .build_functions import build_model_from_cfg, build_runner_from_cfg, build_scheduler_from_cfg

_DATASET = "treadle.runner.dataset"
_EVALUATOR = "treadle.runner.evaluator"
_MODEL = "treadle.runner.model"
_OPTIM = "treadle.runner.optim"

# Runners, and the constructors that make a runner from a config.
RUNNERS = Registry(
    "runner", build_func=build_runner_from_cfg, scope="treadle", locations=["treadle.runner.runner"]
)
RUNNER_CONSTRUCTORS = Registry("runner constructor", scope="treadle")
# Train, val and test loops.
LOOPS = Registry("loop", scope="treadle", locations=["treadle.runner.loops"])
# Hooks that run at the points of the loops.
HOOKS = Registry("hook", scope="treadle", locations=["treadle.runner.hooks"])
# How model and optimizer are placed and saved: single device, DDP, FSDP, DeepSpeed...
STRATEGIES = Registry("strategy", scope="treadle", locations=["treadle.runner.strategies"])

# Data.
DATASETS = Registry("dataset", scope="treadle", locations=[_DATASET])
DATA_SAMPLERS = Registry("data sampler", scope="treadle", locations=[_DATASET])
TRANSFORMS = Registry("transform", scope="treadle", locations=[_DATASET])

# Models: ``build`` of a list gives an ``nn.Sequential`` of the built modules.
MODELS = Registry("model", build_func=build_model_from_cfg, scope="treadle", locations=[_MODEL])
# FSDP's wrapper has a location of its own: it is imported only when a wrapper is built.
MODEL_WRAPPERS = Registry(
    "model_wrapper",
    scope="treadle",
    locations=[
        _MODEL,
        "treadle.runner.model.wrappers.fully_sharded",
        "treadle.runner.model.wrappers.deepspeed",
        "treadle.runner.strategies.colossalai_model_wrapper",
    ],
)
WEIGHT_INITIALIZERS = Registry("weight initializer", scope="treadle", locations=[_MODEL])

# Optimization.
OPTIMIZERS = Registry("optimizer", scope="treadle", locations=[_OPTIM])
OPTIM_WRAPPERS = Registry(
    "optim_wrapper",
    scope="treadle",
    locations=[
        _OPTIM,
        "treadle.runner.optim.optimizer.deepspeed_optim_wrapper",
        "treadle.runner.optim.optimizer.colossalai_optim_wrapper",
    ],
)
OPTIM_WRAPPER_CONSTRUCTORS = Registry(
    "optimizer wrapper constructor", scope="treadle", locations=[_OPTIM]
)
PARAM_SCHEDULERS = Registry(
    "parameter scheduler", build_func=build_scheduler_from_cfg, scope="treadle", locations=[_OPTIM]
)

# Evaluation.
METRICS = Registry("metric", scope="treadle", locations=[_EVALUATOR])
EVALUATOR = Registry("evaluator", scope="treadle", locations=[_EVALUATOR])

# Everything else a task needs: box coders, anchor generators...
TASK_UTILS = Registry("task util", scope="treadle")
LOG_PROCESSORS = Registry(
    "log_processor", scope="treadle", locations=["treadle.runner.log_processor"]
)
INFERENCERS = Registry("inferencer", scope="treadle")
# Plain functions, such as the collate functions of data loaders.
# The checkpoint functions are here too, for Pretrained weight init (a higher layer than
# treadle.runner.checkpoint, which it must not import).
FUNCTIONS = Registry("function", scope="treadle", locations=[_DATASET, "treadle.runner.checkpoint"])
