"""The initializers of WEIGHT_INITIALIZERS and ``initialize``: layer matching, override,
bias_prob, and every config error a user can write."""

from __future__ import annotations

import copy

import pytest
import torch
from runner_toys import captured_log
from torch import nn

from treadle.runner.model import (
    Caffe2XavierInit,
    ConstantInit,
    KaimingInit,
    NormalInit,
    PretrainedInit,
    TruncNormalInit,
    UniformInit,
    XavierInit,
    bias_init_with_prob,
    initialize,
)
from treadle.runner.registry import WEIGHT_INITIALIZERS


@pytest.fixture
def log():
    with captured_log() as capture:
        yield capture


class MyConv(nn.Conv2d):
    pass


class MyConvChild(MyConv):
    pass


class FooNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.feat = nn.Conv2d(3, 16, 3)
        self.reg = nn.Conv2d(16, 10, 3)
        self.cls = nn.Sequential(nn.Conv2d(16, 5, 3), nn.Linear(5, 5))


def full(module, value):
    return all(torch.all(p == value) for p in [module.weight])


def test_registered_under_mmengine_names():
    expected = {
        "Constant": ConstantInit,
        "Xavier": XavierInit,
        "Normal": NormalInit,
        "TruncNormal": TruncNormalInit,
        "Uniform": UniformInit,
        "Kaiming": KaimingInit,
        "Caffe2Xavier": Caffe2XavierInit,
        "Pretrained": PretrainedInit,
    }
    for name, cls in expected.items():
        assert WEIGHT_INITIALIZERS.get(name) is cls


def test_layer_selects_by_class_name():
    model = nn.Sequential(nn.Conv1d(3, 1, 3), nn.Linear(1, 2))
    initialize(
        model,
        [
            dict(type="Constant", layer="Conv1d", val=1, bias=0),
            dict(type="Constant", layer="Linear", val=2, bias=3),
        ],
    )
    assert full(model[0], 1) and torch.all(model[0].bias == 0)
    assert full(model[1], 2) and torch.all(model[1].bias == 3)


def test_layer_matches_parent_class_names_at_any_depth():
    model = nn.Sequential(MyConv(3, 3, 1), MyConvChild(3, 3, 1), nn.Linear(2, 2))
    initialize(model, dict(type="Constant", layer="Conv2d", val=4))
    assert full(model[0], 4) and full(model[1], 4)
    assert not full(model[2], 4)
    initialize(model, dict(type="Constant", layer="_ConvNd", val=5))
    assert full(model[0], 5) and full(model[1], 5)


def test_without_layer_nothing_is_initialized():
    layer = nn.Linear(3, 3)
    before = layer.weight.clone()
    initialize(layer, dict(type="Constant", val=7))
    assert torch.equal(layer.weight, before)


def test_layer_matching_nothing_warns(log):
    initialize(nn.Linear(2, 2), dict(type="Constant", val=1, layer="Conv2D"))
    assert any(
        "ConstantInit: layer=['Conv2D'] matched no submodule of Linear" in m for m in log.messages
    )


def test_bias_prob_sets_bias():
    layer = nn.Linear(3, 3)
    initialize(layer, dict(type="Normal", layer="Linear", std=0.01, bias_prob=0.01))
    assert torch.allclose(layer.bias, torch.full((3,), bias_init_with_prob(0.01)))


def test_each_initializer_changes_the_weights():
    cfgs = [
        dict(type="Xavier", distribution="uniform"),
        dict(type="Normal", std=0.1),
        dict(type="TruncNormal", std=0.1, a=-0.1, b=0.1),
        dict(type="Uniform", a=-1, b=1),
        dict(type="Kaiming", mode="fan_in"),
        dict(type="Caffe2Xavier"),
    ]
    for cfg in cfgs:
        layer = nn.Linear(16, 16)
        nn.init.zeros_(layer.weight)
        initialize(layer, dict(cfg, layer="Linear", bias=0.25))
        assert layer.weight.abs().sum() > 0, cfg
        assert torch.all(layer.bias == 0.25), cfg


def test_override_initializes_the_named_submodule_whole():
    model = FooNet()
    initialize(
        model,
        dict(
            type="Constant",
            val=1,
            bias=2,
            layer="Conv2d",
            override=dict(type="Constant", name="reg", val=3, bias=4),
        ),
    )
    assert full(model.feat, 1) and full(model.cls[0], 1)
    assert full(model.reg, 3) and torch.all(model.reg.bias == 4)
    assert not full(model.cls[1], 1)


def test_override_with_only_name_reuses_parent_cfg_on_whole_submodule():
    model = FooNet()
    initialize(model, dict(type="Constant", val=6, layer="Conv2d", override=dict(name="cls")))
    # the parent's `layer` is dropped: the Linear inside `cls` is initialized too
    assert full(model.cls[0], 6) and full(model.cls[1], 6)


def test_override_accepts_a_list_and_dotted_names():
    model = FooNet()
    initialize(
        model,
        dict(
            type="Constant",
            val=0,
            layer="Conv2d",
            override=[
                dict(type="Constant", name="cls.1", val=8),
                dict(type="Constant", name="feat", val=9),
            ],
        ),
    )
    assert full(model.cls[1], 8) and full(model.feat, 9) and full(model.reg, 0)


def test_shared_cfg_is_not_changed():
    cfg = dict(type="Constant", val=1, layer="Conv2d", override=dict(name="reg"))
    kept = copy.deepcopy(cfg)
    initialize(FooNet(), cfg)
    initialize(FooNet(), [cfg])
    assert cfg == kept


def test_unknown_type_names_closest():
    with pytest.raises(KeyError, match=r"Constnt is not in .*Constant"):
        initialize(nn.Linear(2, 2), dict(type="Constnt", val=1))


def test_init_cfg_of_wrong_type():
    with pytest.raises(TypeError, match=r"init_cfg must be a dict or a list of dicts, got str"):
        initialize(nn.Linear(2, 2), "Constant")
    with pytest.raises(TypeError, match=r"init_cfg\[1\] must be a dict, got int"):
        initialize(nn.Linear(2, 2), [dict(type="Constant", val=1), 3])


def test_layer_of_wrong_type():
    with pytest.raises(TypeError, match=r"ConstantInit: layer must be a str or a list of str"):
        initialize(nn.Linear(2, 2), dict(type="Constant", val=1, layer=nn.Linear))
    with pytest.raises(TypeError, match=r"layer must be a str or a list of str .*got tuple"):
        ConstantInit(val=1, layer=("Linear",))


def test_bias_and_bias_prob_of_wrong_type():
    with pytest.raises(TypeError, match=r"NormalInit: bias must be a number, got str '0'"):
        NormalInit(bias="0")
    with pytest.raises(TypeError, match=r"bias_prob must be a float, got int 1"):
        NormalInit(bias_prob=1)


def test_bad_distribution_and_mode_in_config():
    with pytest.raises(ValueError, match=r"XavierInit: distribution must be .* got 'gauss'"):
        initialize(nn.Linear(2, 2), dict(type="Xavier", distribution="gauss", layer="Linear"))
    with pytest.raises(ValueError, match=r"KaimingInit: mode must be 'fan_in' or 'fan_out'"):
        KaimingInit(mode="fan_avg")


def test_override_without_name():
    with pytest.raises(ValueError, match=r"each init_cfg override must have the key 'name'"):
        initialize(FooNet(), dict(type="Constant", val=1, override=dict(type="Constant", val=2)))


def test_override_with_arguments_but_no_type():
    with pytest.raises(ValueError, match=r"sets arguments but no 'type'"):
        initialize(FooNet(), dict(type="Constant", val=1, override=dict(name="reg", val=2)))


def test_override_naming_a_missing_submodule():
    with pytest.raises(
        RuntimeError,
        match=r"override names 'rge', but FooNet has no submodule 'rge' "
        r"\(its children: feat, reg, cls\); did you mean 'reg'\?",
    ):
        initialize(FooNet(), dict(type="Constant", val=1, override=dict(name="rge")))


def test_override_of_wrong_type():
    with pytest.raises(TypeError, match=r"init_cfg override must be a dict or a list of dicts"):
        initialize(FooNet(), dict(type="Constant", val=1, override="reg"))
