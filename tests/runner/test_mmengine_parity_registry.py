"""The root registries against MMEngine 0.10's: the same names, the same build functions'
behaviour, the same answers for downstream child registries.

Runs only where mmengine is installed: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import pytest

mm = pytest.importorskip("mmengine.registry")

import torch.nn as nn  # noqa: E402

import treadle.runner.registry as tr  # noqa: E402

# mmengine.registry exports these; treadle.runner.registry must offer every one of them.
EXPORTS = [name for name in mm.__all__]
ROOT_NAMES = [name for name in EXPORTS if isinstance(getattr(mm, name), mm.Registry)]


@pytest.mark.parametrize("name", EXPORTS)
def test_every_public_name_of_mmengine_registry_exists(name):
    assert hasattr(tr, name), name


@pytest.mark.parametrize("name", ROOT_NAMES)
def test_root_registries_have_mmengines_names(name):
    assert getattr(tr, name).name == getattr(mm, name).name


# Which roots build through something other than build_from_cfg, and how a user notices it.
SPECIAL_BUILDS = {"MODELS", "PARAM_SCHEDULERS", "RUNNERS", "OPTIMIZERS"}


@pytest.mark.parametrize("name", sorted(set(ROOT_NAMES) - SPECIAL_BUILDS))
def test_plain_roots_build_a_registered_class_with_its_arguments(name):
    class Thing:
        def __init__(self, a, b=2):
            self.args = (a, b)

    results = []
    for api in (mm, tr):
        child = api.Registry(name.lower(), parent=getattr(api, name), scope=f"parity_{api is mm}")
        child.register_module(module=Thing, force=True)
        built = child.build(dict(type="Thing", a=1), default_args=dict(b=5))
        results.append(built.args)
    assert results[0] == results[1] == (1, 5)


def _both(function):
    return [function(mm), function(tr)]


def test_a_list_of_models_is_a_sequential_in_both():
    def build(api):
        model = api.MODELS.build(
            [dict(type=nn.Linear, in_features=2, out_features=3), dict(type=nn.ReLU)]
        )
        return type(model).__name__, [type(m).__name__ for m in model]

    first, second = _both(build)
    assert first == second == ("Sequential", ["Linear", "ReLU"])


def test_scheduler_conversion_calls_build_iter_from_epoch_in_both():
    class Step:
        def __init__(self, milestones, optimizer=None):
            self.milestones = milestones

        @classmethod
        def build_iter_from_epoch(cls, milestones, epoch_length, optimizer=None):
            return cls([m * epoch_length for m in milestones], optimizer)

    def build(api):
        cfg = dict(type=Step, milestones=[1, 2], convert_to_iter_based=True)
        converted = api.PARAM_SCHEDULERS.build(cfg, default_args=dict(epoch_length=3))
        plain = api.PARAM_SCHEDULERS.build(dict(type=Step, milestones=[4]))
        return converted.milestones, plain.milestones

    first, second = _both(build)
    assert first == second == ([3, 6], [4])


def test_runner_is_built_through_from_cfg_with_runner_type_in_both():
    class MyRunner:
        @classmethod
        def from_cfg(cls, cfg):
            return ("built", cfg["work_dir"], cfg.get("runner_type") is MyRunner)

    first, second = _both(lambda api: api.RUNNERS.build(dict(runner_type=MyRunner, work_dir="w")))
    assert first == second == ("built", "w", True)


def test_unknown_runner_type_is_a_key_error_in_both():
    for api in (mm, tr):
        with pytest.raises(KeyError):
            api.RUNNERS.build(dict(runner_type="NoSuchRunnerAnywhere"))


def test_a_child_registry_inherits_the_parents_build_function_in_both():
    def child_build_func(api):
        child = api.Registry("model", parent=api.MODELS, scope=f"parity_child_{api is mm}")
        return child.build_func.__name__

    first, second = _both(child_build_func)
    assert first == second == "build_model_from_cfg"


def test_count_registered_modules_lists_the_same_registry_names():
    mine = tr.count_registered_modules(verbose=False)["registries"]
    theirs = mm.count_registered_modules(verbose=False)["registries"]
    assert set(mine) == set(theirs)
    for name in mine:
        # the same fields per registry (the lists of registered names differ, as the contents do)
        assert {"num_modules", "scope"} <= set(mine[name][0]) & set(theirs[name][0])
