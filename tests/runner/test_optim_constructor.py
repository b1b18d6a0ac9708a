"""DefaultOptimWrapperConstructor: one param group per parameter with the settings paramwise_cfg
gives it, the log of those settings, and the errors and warnings of a wrong config."""

from __future__ import annotations

import logging

import pytest
import torch
from runner_toys import captured_log
from torch import nn

from treadle.runner.optim import DefaultOptimWrapperConstructor, OptimWrapper
from treadle.runner.registry import OPTIM_WRAPPERS, OPTIMIZERS

LR, WD = 0.01, 1e-4


class DeformConv2d(nn.Conv2d):
    """Stands for mmcv.ops.DeformConv2dPack: known by its class name, with a conv_offset."""

    def __init__(self, channels):
        super().__init__(channels, channels, 3, padding=1)
        self.conv_offset = nn.Conv2d(channels, 18, 3, padding=1)


class Net(nn.Module):
    """Every kind of parameter the rules tell apart."""

    def __init__(self):
        super().__init__()
        self.param1 = nn.Parameter(torch.ones(1))  # a 1-d parameter of the model itself
        self.conv1 = nn.Conv2d(3, 4, 1, bias=False)
        self.conv2 = nn.Conv2d(4, 2, 1)
        self.bn = nn.BatchNorm2d(2)
        self.sub = nn.Module()
        self.sub.param1 = nn.Parameter(torch.ones(1))
        self.sub.gn = nn.GroupNorm(2, 2)
        self.sub.conv1 = nn.Conv2d(2, 2, 3, groups=2)  # depthwise
        self.dcn = DeformConv2d(2)
        self.fc = nn.Linear(2, 2)
        self.ln = nn.LayerNorm(2)


NAMES = [
    "param1",
    "conv1.weight",
    "conv2.weight",
    "conv2.bias",
    "bn.weight",
    "bn.bias",
    "sub.param1",
    "sub.gn.weight",
    "sub.gn.bias",
    "sub.conv1.weight",
    "sub.conv1.bias",
    "dcn.weight",
    "dcn.bias",
    "dcn.conv_offset.weight",
    "dcn.conv_offset.bias",
    "fc.weight",
    "fc.bias",
    "ln.weight",
    "ln.bias",
]


def build(model=None, paramwise_cfg=None, **optimizer):
    optimizer = {"type": "SGD", "lr": LR, "weight_decay": WD, "momentum": 0.9, **optimizer}
    constructor = DefaultOptimWrapperConstructor(dict(optimizer=optimizer), paramwise_cfg)
    return constructor(model if model is not None else Net())


def by_name(optim_wrapper, model):
    names = {id(p): n for n, p in model.named_parameters()}
    return {
        names[id(group["params"][0])]: (group["lr"], group["weight_decay"])
        for group in optim_wrapper.optimizer.param_groups
    }


@pytest.fixture
def logged():
    """The messages logged at a level: ``logged(logging.WARNING)``."""
    with captured_log() as log:
        yield log.at


def test_without_paramwise_cfg_one_group_holds_every_parameter():
    model = Net()
    wrapper = build(model)
    assert isinstance(wrapper, OptimWrapper)
    assert isinstance(wrapper.optimizer, torch.optim.SGD)
    (group,) = wrapper.optimizer.param_groups
    assert group["params"] == list(model.parameters())
    assert (group["lr"], group["weight_decay"], group["momentum"]) == (LR, WD, 0.9)


def test_every_rule_gives_each_parameter_its_settings():
    model = Net()
    paramwise_cfg = dict(
        bias_lr_mult=2.0,
        bias_decay_mult=0.5,
        norm_decay_mult=0.0,
        dwconv_decay_mult=0.1,
        flat_decay_mult=0.3,
        dcn_offset_lr_mult=0.1,
    )
    got = by_name(build(model, paramwise_cfg), model)
    assert list(got) == NAMES  # one group per parameter, in the order of the module tree
    assert got == {
        "param1": (LR, WD * 0.3),  # flat
        "conv1.weight": (LR, WD),
        "conv2.weight": (LR, WD),
        "conv2.bias": (LR * 2, WD * 0.5),
        "bn.weight": (LR, 0.0),
        "bn.bias": (LR, 0.0),  # a norm's bias: neither bias_lr_mult nor bias_decay_mult
        "sub.param1": (LR, WD * 0.3),
        "sub.gn.weight": (LR, 0.0),
        "sub.gn.bias": (LR, 0.0),
        "sub.conv1.weight": (LR, WD * 0.1),
        "sub.conv1.bias": (LR * 2, WD * 0.5),  # bias_decay_mult comes before dwconv's
        "dcn.weight": (LR, WD),
        "dcn.bias": (LR * 2, WD * 0.5),
        "dcn.conv_offset.weight": (LR * 0.1, WD),
        "dcn.conv_offset.bias": (LR * 0.1, WD),  # inside a DCN: no bias nor flat rule
        "fc.weight": (LR, WD),
        "fc.bias": (LR * 2, WD * 0.5),
        "ln.weight": (LR, 0.0),
        "ln.bias": (LR, 0.0),
    }


def test_flat_decay_mult_applies_where_no_earlier_rule_does():
    model = Net()
    got = by_name(build(model, dict(flat_decay_mult=0.0)), model)
    one_d = {name for name, p in model.named_parameters() if p.ndim == 1}
    inside_dcn = {"dcn.conv_offset.bias"}
    for name, (lr, wd) in got.items():
        assert lr == LR
        assert wd == (0.0 if name in one_d - inside_dcn else WD), name


def test_custom_keys_longest_then_alphabetical_wins_and_other_rules_stop():
    model = Net()
    custom_keys = {
        "sub": dict(lr_mult=0.5),
        "sub.gn": dict(lr_mult=0.1, decay_mult=0.0),
        "conv": dict(decay_mult=0.2),  # 'sub.conv1' too: 'conv' is shorter than 'sub.gn'
        "bn.": dict(lr_mult=3.0, momentum=0.5),
        "c.": dict(lr_mult=7.0),  # 'fc.' and 'dcn.', but shorter than 'conv'
    }
    paramwise_cfg = dict(custom_keys=custom_keys, bias_lr_mult=2.0, norm_decay_mult=0.0)
    wrapper = build(model, paramwise_cfg)
    got = by_name(wrapper, model)
    assert got["sub.gn.weight"] == (LR * 0.1, 0.0)
    assert got["sub.param1"] == (LR * 0.5, WD)
    assert got["sub.conv1.bias"] == (LR, WD * 0.2)  # 'conv' (4 letters) beats 'sub' (3)
    assert got["conv2.bias"] == (LR, WD * 0.2)  # custom: no bias_lr_mult
    assert got["bn.weight"] == (LR * 3.0, WD)  # custom: no norm_decay_mult
    assert got["fc.bias"] == (LR * 7.0, WD)
    assert got["dcn.conv_offset.weight"] == (LR, WD * 0.2)  # 'conv' is longer than 'c.'
    assert got["ln.bias"] == (LR, 0.0)  # no key: the rules
    groups = {id(g["params"][0]): g for g in wrapper.optimizer.param_groups}
    bn_group = groups[id(model.bn.weight)]
    # Every setting of the key is in the group, the mults too.
    assert bn_group["momentum"] == 0.5 and bn_group["lr_mult"] == 3.0
    assert groups[id(model.fc.weight)]["momentum"] == 0.9


def test_custom_key_same_length_keys_are_tried_in_alphabetical_order():
    model = Net()
    custom_keys = {"v2.": dict(lr_mult=3.0), "nv2": dict(lr_mult=2.0)}
    got = by_name(build(model, dict(custom_keys=custom_keys)), model)
    assert got["conv2.weight"] == (LR * 2.0, WD)  # 'nv2' < 'v2.'


def test_a_key_with_a_leading_dot_matches_parameters_of_the_model_itself():
    model = Net()
    got = by_name(build(model, dict(custom_keys={".param1": dict(lr_mult=0.0)})), model)
    assert got["param1"] == (0.0, WD) and got["sub.param1"] == (0.0, WD)


def test_frozen_parameters_are_left_out_with_a_warning(logged):
    model = Net()
    model.conv2.weight.requires_grad_(False)
    got = by_name(build(model, dict(norm_decay_mult=0.0)), model)
    assert "conv2.weight" not in got and len(got) == len(NAMES) - 1
    assert "conv2.weight is skipped since its requires_grad=False" in logged(logging.WARNING)


class Shared(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = nn.Sequential(self.a, nn.BatchNorm1d(2))


def test_a_shared_parameter_fails_naming_both_places_without_bypass_duplicate():
    with pytest.raises(
        ValueError,
        match=r"some parameters appear in more than one parameter group: b\.0\.weight is the "
        r"parameter a\.weight again.*bypass_duplicate'\]=True",
    ):
        build(Shared(), dict(norm_decay_mult=0.0))


def test_bypass_duplicate_keeps_the_first_and_warns(logged):
    model = Shared()
    wrapper = build(model, dict(norm_decay_mult=0.0, bypass_duplicate=True))
    groups = wrapper.optimizer.param_groups
    assert [g["params"][0] for g in groups] == [
        model.a.weight,
        model.a.bias,
        model.b[1].weight,
        model.b[1].bias,
    ]
    assert [g["weight_decay"] for g in groups] == [WD, WD, 0.0, 0.0]
    warnings = logged(logging.WARNING)
    assert any("b.0.bias is the parameter a.bias again" in w for w in warnings)


def test_settings_of_each_parameter_are_logged(logged):
    build(Net(), dict(bias_lr_mult=2.0, bias_decay_mult=0.5))
    infos = logged(logging.INFO)
    assert "paramwise_options -- conv2.bias:lr=0.02, weight_decay=5e-05" in infos
    assert not any("conv2.weight" in line for line in infos)  # nothing of its own


def test_a_model_wrapper_is_unwrapped_but_a_child_named_module_is_not(logged):
    inner = Net()
    wrapped = nn.DataParallel(inner)
    got = by_name(build(wrapped, dict(bias_lr_mult=2.0)), inner)
    assert list(got) == NAMES

    class HasModule(nn.Module):
        def __init__(self):
            super().__init__()
            self.module = nn.Linear(2, 2)
            self.head = nn.Linear(2, 2)

    model = HasModule()
    (group,) = build(model).optimizer.param_groups
    assert len(group["params"]) == 4
    assert (
        "HasModule has a child named 'module' and parameters outside it (head.weight, "
        "head.bias): all of its parameters are optimized, where MMEngine would optimize only "
        "those of model.module"
    ) in logged(logging.WARNING)


def test_a_bare_module_holding_only_module_is_unwrapped_like_a_wrapper(logged):
    # As MMEngine does for any model with `.module`: paramwise rules and a constructor's
    # add_params see the inner model's names ('fc.bias', not 'module.fc.bias').
    class Holder(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    inner = Net()
    got = by_name(build(Holder(inner), dict(custom_keys={"fc.bias": dict(lr_mult=3.0)})), inner)
    assert list(got) == NAMES and got["fc.bias"] == (LR * 3, WD)
    seen = []

    class NamesSeen(DefaultOptimWrapperConstructor):
        def add_params(self, params, module, prefix="", **kwargs):
            if not prefix:  # the first call, with the whole model
                seen.extend(name for name, _ in module.named_parameters())
            super().add_params(params, module, prefix, **kwargs)

    NamesSeen(dict(optimizer=dict(type="SGD", lr=LR)), dict(bias_lr_mult=2.0))(Holder(inner))
    assert seen == NAMES
    assert not logged(logging.WARNING)


def test_a_wrapper_registered_in_model_wrappers_is_unwrapped():
    from treadle.runner.registry import MODEL_WRAPPERS

    @MODEL_WRAPPERS.register_module(name="OptimConstructorTestWrapper", force=True)
    class MyWrapper(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    inner = Net()
    got = by_name(build(MyWrapper(inner), dict(bias_lr_mult=2.0)), inner)
    assert list(got) == NAMES and got["fc.bias"] == (LR * 2, WD)


def test_lr_and_weight_decay_missing_are_kept_out_of_custom_groups():
    model = nn.Linear(2, 2)
    constructor = DefaultOptimWrapperConstructor(
        dict(optimizer=dict(type="Adadelta")), dict(custom_keys={"bias": dict(momentum=0.1)})
    )
    groups = constructor(model).optimizer.param_groups
    assert groups[1]["momentum"] == 0.1 and groups[1]["lr"] == groups[0]["lr"] == 1.0


def test_the_first_argument_of_the_optimizer_gets_the_parameters():
    class HybridLike(torch.optim.SGD):  # colossalai's HybridAdam names it model_params
        def __init__(self, model_params, lr):
            super().__init__(model_params, lr=lr)

    wrapper = DefaultOptimWrapperConstructor(
        dict(optimizer=dict(type=HybridLike, lr=0.1)), dict(bias_lr_mult=2.0)
    )(nn.Linear(2, 2))
    assert [g["lr"] for g in wrapper.optimizer.param_groups] == [0.1, 0.2]


def test_wrapper_type_and_arguments_come_from_the_config():
    class MyWrapper(OptimWrapper):
        def __init__(self, optimizer, tag):
            super().__init__(optimizer)
            self.tag = tag

    constructor = DefaultOptimWrapperConstructor(
        dict(type=MyWrapper, tag="x", optimizer=dict(type="SGD", lr=0.1))
    )
    wrapper = constructor(nn.Linear(2, 2))
    assert isinstance(wrapper, MyWrapper) and wrapper.tag == "x"
    assert "OptimWrapper" in OPTIM_WRAPPERS


# -- wrong configs ---------------------------------------------------------------------------


def test_optim_wrapper_cfg_must_be_a_dict_with_an_optimizer():
    with pytest.raises(TypeError, match="optim_wrapper_cfg must be a dict, got list"):
        DefaultOptimWrapperConstructor([dict(type="SGD")])
    with pytest.raises(
        AssertionError, match=r"`optim_wrapper_cfg` must contain the key 'optimizer'.*\['type'\]"
    ) as caught:
        DefaultOptimWrapperConstructor(dict(type="OptimWrapper"))
    assert isinstance(caught.value, ValueError)
    with pytest.raises(TypeError, match=r"optim_wrapper_cfg\['optimizer'\] must be a dict"):
        DefaultOptimWrapperConstructor(dict(optimizer="SGD"))


def test_paramwise_cfg_must_be_a_dict():
    with pytest.raises(TypeError, match="paramwise_cfg must be None or a dict, got list"):
        DefaultOptimWrapperConstructor(dict(optimizer=dict(type="SGD", lr=0.1)), [1])


def test_custom_keys_must_be_a_dict_of_dicts():
    optim_wrapper_cfg = dict(optimizer=dict(type="SGD", lr=0.1, weight_decay=WD))
    with pytest.raises(TypeError, match=r"paramwise_cfg\['custom_keys'\] must be a dict.*list"):
        DefaultOptimWrapperConstructor(optim_wrapper_cfg, dict(custom_keys=["backbone"]))
    with pytest.raises(TypeError, match=r"\['custom_keys'\]\['backbone'\] must be a dict.*float"):
        DefaultOptimWrapperConstructor(optim_wrapper_cfg, dict(custom_keys={"backbone": 0.1}))
    with pytest.raises(TypeError, match=r"\['backbone'\]\['lr_mult'\] must be a number, got str"):
        DefaultOptimWrapperConstructor(
            optim_wrapper_cfg, dict(custom_keys={"backbone": dict(lr_mult="0.1")})
        )


def test_mults_and_bypass_duplicate_must_have_the_right_type():
    optim_wrapper_cfg = dict(optimizer=dict(type="SGD", lr=0.1, weight_decay=WD))
    with pytest.raises(TypeError, match=r"paramwise_cfg\['bias_lr_mult'\] must be a number"):
        DefaultOptimWrapperConstructor(optim_wrapper_cfg, dict(bias_lr_mult=None))
    with pytest.raises(TypeError, match=r"paramwise_cfg\['bypass_duplicate'\] must be a bool"):
        DefaultOptimWrapperConstructor(optim_wrapper_cfg, dict(bypass_duplicate="yes"))


@pytest.mark.parametrize(
    "paramwise_cfg",
    [
        dict(bias_decay_mult=0.0),
        dict(norm_decay_mult=0.0),
        dict(dwconv_decay_mult=0.0),
        dict(flat_decay_mult=0.0),
        dict(custom_keys={"fc": dict(decay_mult=0.0)}),
    ],
)
def test_decay_mults_need_a_weight_decay(paramwise_cfg):
    with pytest.raises(
        ValueError,
        match=r"multiplies the optimizer's weight_decay.*"
        r"set optimizer\.weight_decay",
    ):
        DefaultOptimWrapperConstructor(dict(optimizer=dict(type="SGD", lr=0.1)), paramwise_cfg)


@pytest.mark.parametrize(
    "paramwise_cfg",
    [
        dict(bias_lr_mult=2.0),
        dict(dcn_offset_lr_mult=0.1),
        dict(custom_keys={"x": dict(lr_mult=2)}),
    ],
)
def test_lr_mults_need_an_lr(paramwise_cfg):
    with pytest.raises(ValueError, match=r"multiplies the optimizer's lr.*set optimizer\.lr"):
        DefaultOptimWrapperConstructor(dict(optimizer=dict(type="Adadelta")), paramwise_cfg)


def test_unknown_paramwise_keys_warn_with_the_closest_valid_key(logged):
    DefaultOptimWrapperConstructor(
        dict(optimizer=dict(type="SGD", lr=0.1, weight_decay=WD)),
        dict(norm_decay_mul=0.0, colour="red"),
    )
    warnings = logged(logging.WARNING)
    assert any("'norm_decay_mul'" in w and "did you mean 'norm_decay_mult'?" in w for w in warnings)
    assert any(
        "'colour', which DefaultOptimWrapperConstructor does not use (its keys:" in w
        for w in warnings
    )


def test_a_subclass_with_its_own_rules_may_read_its_own_keys(logged):
    class LayerDecay(DefaultOptimWrapperConstructor):
        def add_params(self, params, module, prefix="", is_dcn_module=None):
            decay = self.paramwise_cfg["decay_rate"]
            params.extend({"params": [p], "lr": LR * decay} for p in module.parameters())

    wrapper = LayerDecay(dict(optimizer=dict(type="SGD", lr=LR)), dict(decay_rate=0.5))(
        nn.Linear(2, 2)
    )
    assert [g["lr"] for g in wrapper.optimizer.param_groups] == [LR * 0.5] * 2
    assert logged(logging.WARNING) == []


def test_a_custom_key_that_matches_no_parameter_warns(logged):
    build(Net(), dict(custom_keys={"backbone": dict(lr_mult=0.1), "fc": dict(lr_mult=0.1)}))
    warnings = logged(logging.WARNING)
    assert any(
        "custom_keys'] has the key 'backbone', which is part of no parameter name of Net" in w
        for w in warnings
    )
    assert not any("'fc'" in w for w in warnings)


def test_an_unknown_optimizer_type_names_the_closest_ones():
    with pytest.raises(
        KeyError, match=r"AdamWW is not in the treadle::optimizer registry.*'AdamW'"
    ):
        build(Net(), type="AdamWW")
    with pytest.raises(KeyError, match=r"needs the key 'type'"):
        DefaultOptimWrapperConstructor(dict(optimizer=dict(lr=0.1)))(Net())


def test_an_optimizer_registered_in_a_child_scope_is_found_through_the_default_scope():
    from treadle.registry import DefaultScope, Registry

    child = Registry("optimizer", parent=OPTIMIZERS, scope="optim_constructor_test")

    @child.register_module()
    class ScopedSGD(torch.optim.SGD):
        pass

    DefaultScope.get_instance("optim_constructor_test", scope_name="optim_constructor_test")
    wrapper = build(nn.Linear(2, 2), type="ScopedSGD")
    assert type(wrapper.optimizer) is ScopedSGD
