"""DefaultOptimWrapperConstructor and build_optim_wrapper against MMEngine 0.10's: the same
model and configs through both, compared as the optimizer sees them (one param group per
parameter, in the same order, with the same lr, weight decay and other settings), plus the
settings each logs and the errors of wrong configs.

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...``.
"""

from __future__ import annotations

import sys
import types

import pytest

pytest.importorskip("mmengine")

import mmengine.logging as mm_logging
import mmengine.optim as mm
import mmengine.optim.optimizer.default_constructor as mm_default_constructor
import torch
from runner_toys import captured_log
from torch import nn

import treadle.runner.optim as tr
from treadle.logging import Logger

LR, WD = 0.01, 1e-4


class DeformConv2d(nn.Conv2d):
    """Stands for mmcv.ops.DeformConv2dPack on both sides (mmcv is not installed)."""

    def __init__(self, channels):
        super().__init__(channels, channels, 3, padding=1)
        self.conv_offset = nn.Conv2d(channels, 18, 3, padding=1)


class ModulatedDeformConv2d(DeformConv2d):
    pass


class Net(nn.Module):
    def __init__(self, shared=False, frozen=False):
        super().__init__()
        self.param1 = nn.Parameter(torch.ones(1))
        self.conv1 = nn.Conv2d(3, 4, 1, bias=False)
        self.conv2 = nn.Conv2d(4, 2, 1)
        self.bn = nn.BatchNorm2d(2)
        self.sub = nn.Module()
        self.sub.param1 = nn.Parameter(torch.ones(1))
        self.sub.gn = nn.GroupNorm(2, 2)
        self.sub.conv1 = nn.Conv2d(2, 2, 3, groups=2)  # depthwise
        self.sub.in_ = nn.InstanceNorm2d(2, affine=True)
        self.single = nn.Conv2d(1, 2, 3)  # in_channels == groups == 1: depthwise for both
        self.dcn = DeformConv2d(2)
        self.mdcn = ModulatedDeformConv2d(2)
        self.fc = nn.Linear(2, 2)
        self.ln = nn.LayerNorm(2)
        self.head = nn.Sequential(nn.Linear(2, 3), nn.SyncBatchNorm(3), nn.Conv1d(3, 3, 1))
        if shared:
            self.again = nn.Sequential(self.fc, nn.Linear(2, 2))
        if frozen:
            self.conv2.bias.requires_grad_(False)
            self.sub.gn.weight.requires_grad_(False)


class Wrapper(nn.Module):
    """Stands for a model wrapper on MMEngine's side: it unwraps anything with `.module`."""

    def __init__(self, module):
        super().__init__()
        self.module = module


@pytest.fixture(autouse=True)
def fake_mmcv(monkeypatch):
    """MMEngine finds deformable convolutions in mmcv.ops when mmcv-full is available."""
    ops = types.ModuleType("mmcv.ops")
    ops.DeformConv2d, ops.ModulatedDeformConv2d = DeformConv2d, ModulatedDeformConv2d
    mmcv = types.ModuleType("mmcv")
    mmcv.ops = ops
    monkeypatch.setitem(sys.modules, "mmcv", mmcv)
    monkeypatch.setitem(sys.modules, "mmcv.ops", ops)
    monkeypatch.setattr(mm_default_constructor, "mmcv_full_available", lambda: True)


def groups_of(optim_wrapper, model):
    names = {id(p): n for n, p in model.named_parameters(remove_duplicate=False)}
    return [
        (
            [names[id(p)] for p in group["params"]],
            {k: v for k, v in group.items() if k != "params"},
        )
        for group in optim_wrapper.optimizer.param_groups
    ]


def both(model_kwargs, paramwise_cfg, optimizer=None):
    optimizer = optimizer or dict(type="SGD", lr=LR, weight_decay=WD, momentum=0.9)
    results = []
    for module in (mm, tr):
        model = Net(**model_kwargs)
        cfg = dict(optimizer=dict(optimizer))
        if paramwise_cfg is not None:
            cfg["paramwise_cfg"] = paramwise_cfg
        results.append(groups_of(module.build_optim_wrapper(model, cfg), model))
    return results


ALL_RULES = dict(
    bias_lr_mult=2.0,
    bias_decay_mult=0.5,
    norm_decay_mult=0.0,
    dwconv_decay_mult=0.1,
    flat_decay_mult=0.3,
    dcn_offset_lr_mult=0.1,
)
CUSTOM_KEYS = {
    "sub": dict(lr_mult=0.5),
    "sub.gn": dict(lr_mult=0.1, decay_mult=0.0),
    "conv": dict(decay_mult=0.2),
    "bn.": dict(lr_mult=3.0, momentum=0.5),
    "c.": dict(lr_mult=7.0),
    "v2.": dict(lr_mult=3.0),
    "nv2": dict(lr_mult=2.0),
    ".param1": dict(lr_mult=0.0),
    "head.1": dict(),
}
CASES = {
    "none": ({}, None),
    "empty": ({}, {}),
    **{name: ({}, {name: value}) for name, value in ALL_RULES.items()},
    "all_rules": ({}, ALL_RULES),
    "custom_keys": ({}, dict(custom_keys=CUSTOM_KEYS)),
    "custom_keys_and_rules": ({}, dict(custom_keys=CUSTOM_KEYS, **ALL_RULES)),
    "bypass_duplicate": ({"shared": True}, dict(bypass_duplicate=True, **ALL_RULES)),
    "frozen": ({"frozen": True}, dict(norm_decay_mult=0.0)),
}


@pytest.mark.parametrize(("model_kwargs", "paramwise_cfg"), CASES.values(), ids=list(CASES))
def test_param_groups_equal_mmengines(model_kwargs, paramwise_cfg):
    theirs, ours = both(model_kwargs, paramwise_cfg)
    assert ours == theirs


def test_without_weight_decay_custom_keys_set_only_the_lr():
    optimizer = dict(type="Adam", lr=LR)
    theirs, ours = both(
        {}, dict(custom_keys={"fc": dict(lr_mult=0.1)}, bias_lr_mult=2.0), optimizer
    )
    assert ours == theirs


def test_the_logged_settings_are_mmengines(monkeypatch):
    """MMEngine logs one line per setting, treadle one per parameter: the same settings."""

    def settings(logger_class, module):
        with captured_log(logger_class.get_current_instance()) as log:
            model = Net()
            cfg = dict(
                optimizer=dict(type="SGD", lr=LR, weight_decay=WD),
                paramwise_cfg=dict(custom_keys=CUSTOM_KEYS, **ALL_RULES),
            )
            module.build_optim_wrapper(model, cfg)
        found = set()
        for message in log.messages:
            if message.startswith("paramwise_options -- "):
                name, _, rest = message[len("paramwise_options -- ") :].partition(":")
                found.update((name, item) for item in rest.split(", "))
        return found

    theirs = settings(mm_logging.MMLogger, mm)
    ours = settings(Logger, tr)
    assert theirs and ours == theirs


def test_a_shared_parameter_without_bypass_duplicate_is_a_value_error_on_both():
    for module in (mm, tr):
        with pytest.raises(ValueError):
            module.build_optim_wrapper(
                Net(shared=True),
                dict(optimizer=dict(type="SGD", lr=LR), paramwise_cfg=dict(bias_lr_mult=2.0)),
            )


def test_a_model_wrapper_is_unwrapped_on_both():
    results = []
    for module in (mm, tr):
        inner = Net()
        wrapper = module.build_optim_wrapper(
            nn.DataParallel(inner),
            dict(
                optimizer=dict(type="SGD", lr=LR, weight_decay=WD),
                paramwise_cfg=dict(norm_decay_mult=0.0),
            ),
        )
        results.append(groups_of(wrapper, inner))
    assert results[0] == results[1]


@pytest.mark.parametrize(
    ("paramwise_cfg", "optimizer", "error"),
    [
        ([1], dict(type="SGD", lr=LR), TypeError),
        (dict(custom_keys=["a"]), dict(type="SGD", lr=LR), TypeError),
        (dict(custom_keys={"fc": dict(decay_mult=0.1)}), dict(type="SGD", lr=LR), ValueError),
        (dict(bias_decay_mult=0.1), dict(type="SGD", lr=LR), ValueError),
        (dict(norm_decay_mult=0.1), dict(type="SGD", lr=LR), ValueError),
        (dict(dwconv_decay_mult=0.1), dict(type="SGD", lr=LR), ValueError),
    ],
)
def test_wrong_configs_raise_the_same_error_type(paramwise_cfg, optimizer, error):
    for module in (mm, tr):
        with pytest.raises(error):
            module.DefaultOptimWrapperConstructor(dict(optimizer=optimizer), paramwise_cfg)


def test_wrong_optim_wrapper_cfg_raises_on_both():
    for module in (mm, tr):
        with pytest.raises(TypeError):
            module.DefaultOptimWrapperConstructor([dict(type="SGD")])
    with pytest.raises(AssertionError):  # MMEngine: an assert
        mm.DefaultOptimWrapperConstructor(dict(type="OptimWrapper"))
    with pytest.raises(AssertionError, match="`optim_wrapper_cfg` must contain the key"):
        tr.DefaultOptimWrapperConstructor(dict(type="OptimWrapper"))


def test_the_same_torch_optimizers_are_registered():
    from mmengine.optim.optimizer import builder as mm_builder
    from mmengine.registry import OPTIMIZERS as MM_OPTIMIZERS

    from treadle.runner.optim.optimizer import builder as tr_builder
    from treadle.runner.registry import OPTIMIZERS as TR_OPTIMIZERS

    # MMEngine lists torch's Adafactor by its torch name and registers it as TorchAdafactor;
    # both register the base class torch.optim.Optimizer.
    theirs = {"TorchAdafactor" if n == "Adafactor" else n for n in mm_builder.TORCH_OPTIMIZERS}
    assert "Optimizer" in theirs and "Optimizer" in TR_OPTIMIZERS.module_dict
    assert set(tr_builder.TORCH_OPTIMIZERS) == theirs
    for name in theirs:
        assert TR_OPTIMIZERS.get(name) is MM_OPTIMIZERS.get(name)
