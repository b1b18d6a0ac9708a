"""The root registries of treadle.runner: MMEngine's names, one scope, build functions, and
children made by downstream projects."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch.nn as nn

import treadle.runner.registry as registries
from treadle.registry import Registry
from treadle.runner.registry import (
    MODELS,
    PARAM_SCHEDULERS,
    RUNNERS,
    build_model_from_cfg,
    build_runner_from_cfg,
    build_scheduler_from_cfg,
    count_registered_modules,
    init_default_scope,
)

# MMEngine 0.10's root registries and the names they were given.
ROOTS = {
    "RUNNERS": "runner",
    "RUNNER_CONSTRUCTORS": "runner constructor",
    "LOOPS": "loop",
    "HOOKS": "hook",
    "STRATEGIES": "strategy",
    "DATASETS": "dataset",
    "DATA_SAMPLERS": "data sampler",
    "TRANSFORMS": "transform",
    "MODELS": "model",
    "MODEL_WRAPPERS": "model_wrapper",
    "WEIGHT_INITIALIZERS": "weight initializer",
    "OPTIMIZERS": "optimizer",
    "OPTIM_WRAPPERS": "optim_wrapper",
    "OPTIM_WRAPPER_CONSTRUCTORS": "optimizer wrapper constructor",
    "PARAM_SCHEDULERS": "parameter scheduler",
    "METRICS": "metric",
    "EVALUATOR": "evaluator",
    "TASK_UTILS": "task util",
    "VISUALIZERS": "visualizer",
    "VISBACKENDS": "vis_backend",
    "LOG_PROCESSORS": "log_processor",
    "INFERENCERS": "inferencer",
    "FUNCTIONS": "function",
}


@pytest.mark.parametrize(("constant", "name"), ROOTS.items())
def test_every_root_registry_of_mmengine_is_here(constant, name):
    registry = getattr(registries, constant)
    assert isinstance(registry, Registry)
    assert (registry.name, registry.scope, registry.parent) == (name, "treadle", None)
    assert constant in registries.__all__


def test_visual_registries_are_treadle_visuals_own():
    from treadle.visual import VISBACKENDS, VISUALIZERS

    assert registries.VISUALIZERS is VISUALIZERS and registries.VISBACKENDS is VISBACKENDS


def test_an_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'MODEL'"):
        registries.MODEL  # noqa: B018


def test_star_import_gives_every_name():
    namespace: dict = {}
    exec("from treadle.runner.registry import *", namespace)
    assert set(ROOTS) <= set(namespace)


def test_importing_the_registries_imports_neither_torch_nor_matplotlib():
    code = (
        "import sys\n"
        "import treadle.runner.registry\n"
        "print([m for m in ('torch', 'numpy', 'matplotlib') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- children of downstream projects ----------------------------------------------------------


def test_a_downstream_child_registry_finds_and_is_found_as_in_mmengine():
    det_models = Registry("model", parent=MODELS, scope="mydet_roots")

    @det_models.register_module()
    class TinyDetector(nn.Module):
        def __init__(self, width=2):
            super().__init__()
            self.head = nn.Linear(width, 1)

    # the child inherits the parent's build function, and finds the parent's names
    assert det_models.build_func is build_model_from_cfg
    MODELS.register_module(name="RootLinear_roots", module=nn.Linear)
    layer = det_models.build(dict(type="RootLinear_roots", in_features=2, out_features=3))
    assert isinstance(layer, nn.Linear)
    # the parent reaches the child's names through the scope prefix, and through the default scope
    assert isinstance(MODELS.build(dict(type="mydet_roots.TinyDetector")), TinyDetector)
    init_default_scope("mydet_roots")
    assert isinstance(MODELS.build(dict(type="TinyDetector", width=4)), TinyDetector)


def test_an_unknown_type_names_the_registry_and_the_closest_names():
    MODELS.register_module(name="ResNetForRoots", module=nn.Identity, force=True)
    with pytest.raises(
        KeyError, match=r"ResNetForRoot is not in the treadle::model registry"
    ) as error:
        MODELS.build(dict(type="ResNetForRoot"))
    assert "ResNetForRoots" in str(error.value)


# -- build functions ----------------------------------------------------------------------------


def test_a_list_of_model_configs_builds_a_sequential():
    model = MODELS.build(
        [dict(type=nn.Linear, in_features=2, out_features=3), dict(type=nn.ReLU)],
    )
    assert isinstance(model, nn.Sequential)
    assert [type(m) for m in model] == [nn.Linear, nn.ReLU]


def test_model_default_args_reach_every_item_of_a_list():
    model = build_model_from_cfg(
        [dict(type=nn.Linear, in_features=2), dict(type=nn.Linear, in_features=4)],
        MODELS,
        default_args=dict(out_features=5),
    )
    assert [m.out_features for m in model] == [5, 5]


class _Runner:
    def __init__(self, cfg):
        self.cfg = cfg

    @classmethod
    def from_cfg(cls, cfg):
        return cls(cfg)


@pytest.fixture
def toy_runner_as_default():
    """_Runner registered as 'Runner' for one test; the real one is put back after it."""
    RUNNERS.import_from_location()
    real = RUNNERS.module_dict.get("Runner")
    RUNNERS.register_module(name="Runner", module=_Runner, force=True)
    yield
    RUNNERS.module_dict.pop("Runner")
    if real is not None:
        RUNNERS.register_module(name="Runner", module=real)


def test_a_runner_is_built_by_from_cfg_with_the_whole_config(toy_runner_as_default):
    cfg = dict(work_dir="work_dirs/x", model=dict(type="M"))
    runner = RUNNERS.build(cfg)
    assert isinstance(runner, _Runner) and runner.cfg is cfg


def test_a_config_object_builds_a_runner_as_a_dict_does(toy_runner_as_default):
    # MMEngine projects' tools/train.py pass the Config itself: RUNNERS.build(cfg).
    from treadle.config import Config

    cfg = Config(dict(work_dir="work_dirs/x", model=dict(type="M")))
    runner = RUNNERS.build(cfg)
    assert isinstance(runner, _Runner) and runner.cfg is cfg


def test_runner_type_picks_the_class_by_name_or_class():
    class OtherRunner(_Runner):
        pass

    RUNNERS.register_module(module=OtherRunner, force=True)
    assert type(RUNNERS.build(dict(runner_type="OtherRunner"))) is OtherRunner
    assert type(build_runner_from_cfg(dict(runner_type=OtherRunner), RUNNERS)) is OtherRunner


def test_runner_errors_name_what_was_written():
    with pytest.raises(KeyError, match="NoSuchRunner is not in the treadle::runner registry"):
        RUNNERS.build(dict(runner_type="NoSuchRunner"))
    with pytest.raises(
        TypeError, match="runner_type must be a registered name or a class, got int"
    ):
        RUNNERS.build(dict(runner_type=3))

    class NoFromCfg:
        pass

    with pytest.raises(TypeError, match="NoFromCfg cannot be built from a config"):
        RUNNERS.build(dict(runner_type=NoFromCfg))
    with pytest.raises(TypeError, match="cfg must be a mapping"):
        RUNNERS.build(["not", "a", "dict"])


class _StepScheduler:
    def __init__(self, milestones, optimizer=None, by_epoch=True):
        self.milestones, self.optimizer, self.by_epoch = milestones, optimizer, by_epoch

    @classmethod
    def build_iter_from_epoch(cls, milestones, epoch_length, optimizer=None):
        return cls([m * epoch_length for m in milestones], optimizer, by_epoch=False)


def test_scheduler_convert_to_iter_based_uses_build_iter_from_epoch():
    PARAM_SCHEDULERS.register_module(name="StepForRoots", module=_StepScheduler, force=True)
    cfg = dict(type="StepForRoots", milestones=[1, 3], convert_to_iter_based=True)
    scheduler = PARAM_SCHEDULERS.build(cfg, default_args=dict(epoch_length=5, optimizer="opt"))
    assert (scheduler.milestones, scheduler.optimizer, scheduler.by_epoch) == (
        [5, 15],
        "opt",
        False,
    )
    assert cfg["convert_to_iter_based"] is True  # the user's config is left as written


def test_scheduler_without_conversion_is_a_plain_build():
    PARAM_SCHEDULERS.register_module(name="StepForRoots", module=_StepScheduler, force=True)
    scheduler = build_scheduler_from_cfg(
        dict(type="StepForRoots", milestones=[2], convert_to_iter_based=False),
        PARAM_SCHEDULERS,
        default_args=dict(optimizer="opt"),
    )
    assert (scheduler.milestones, scheduler.optimizer, scheduler.by_epoch) == ([2], "opt", True)


def test_scheduler_conversion_errors_name_the_scheduler():
    class NoConversion:
        def __init__(self, **kwargs):
            pass

    with pytest.raises(TypeError, match="NoConversion' has none"):
        PARAM_SCHEDULERS.build(dict(type=NoConversion, convert_to_iter_based=True))
    with pytest.raises(
        KeyError, match="NoSuchLR is not in the treadle::parameter scheduler registry"
    ):
        PARAM_SCHEDULERS.build(dict(type="NoSuchLR", convert_to_iter_based=True))


def test_scope_key_of_a_scheduler_config_is_honoured():
    child = Registry("parameter scheduler", parent=PARAM_SCHEDULERS, scope="mysched_roots")
    child.register_module(name="ChildStep", module=_StepScheduler)
    cfg = dict(type="ChildStep", milestones=[1], _scope_="mysched_roots")
    assert build_scheduler_from_cfg(cfg, PARAM_SCHEDULERS).milestones == [1]
    cfg = dict(
        type="ChildStep", milestones=[1], _scope_="mysched_roots", convert_to_iter_based=True
    )
    assert PARAM_SCHEDULERS.build(cfg, default_args=dict(epoch_length=2)).milestones == [2]


# -- listing ------------------------------------------------------------------------------------


def test_count_registered_modules_scans_treadles_roots(tmp_path):
    scan = count_registered_modules(save_path=str(tmp_path), verbose=False)
    assert set(scan["registries"]) == set(ROOTS)
    assert scan["registries"]["MODELS"][0]["scope"] == "treadle"
    assert (tmp_path / "modules_statistic_results.json").is_file()


def test_strategy_wrappers_are_found_by_name_in_a_fresh_process():
    # Their modules are imported on lookup; deepspeed and colossalai themselves are not.
    code = (
        "import sys\n"
        "from treadle.runner.registry import MODEL_WRAPPERS, OPTIM_WRAPPERS, STRATEGIES\n"
        "names = [OPTIM_WRAPPERS.get('DeepSpeedOptimWrapper'),\n"
        "         OPTIM_WRAPPERS.get('ColossalAIOptimWrapper'),\n"
        "         MODEL_WRAPPERS.get('MMDeepSpeedEngineWrapper'),\n"
        "         MODEL_WRAPPERS.get('ColossalAIModelWrapper'),\n"
        "         STRATEGIES.get('DeepSpeedStrategy'), STRATEGIES.get('FSDPStrategy')]\n"
        "print([n.__name__ for n in names], 'deepspeed' in sys.modules, "
        "'colossalai' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (
        "['DeepSpeedOptimWrapper', 'ColossalAIOptimWrapper', 'MMDeepSpeedEngineWrapper', "
        "'ColossalAIModelWrapper', 'DeepSpeedStrategy', 'FSDPStrategy'] False False"
    )
