"""The optimizers of torch.optim registered by name, and build_optim_wrapper."""

from __future__ import annotations

import copy
import inspect

import pytest
import torch
from torch import nn

from treadle.runner.optim import (
    DefaultOptimWrapperConstructor,
    OptimWrapper,
    ZeroRedundancyOptimizer,
    build_optim_wrapper,
)
from treadle.runner.optim.optimizer import builder
from treadle.runner.optim.optimizer.third_party import real_optimizer_class
from treadle.runner.registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIMIZERS


def torch_optimizer_classes():
    return {
        name: value
        for name, value in vars(torch.optim).items()
        if inspect.isclass(value) and issubclass(value, torch.optim.Optimizer)
    }


def test_every_torch_optimizer_is_registered_by_name():
    classes = torch_optimizer_classes()
    assert {"SGD", "Adam", "AdamW", "LBFGS", "SparseAdam"} <= set(classes)
    for name, optimizer_class in classes.items():
        registered = "TorchAdafactor" if name == "Adafactor" else name
        assert OPTIMIZERS.get(registered) is optimizer_class
        assert registered in builder.TORCH_OPTIMIZERS
    assert len(builder.TORCH_OPTIMIZERS) == len(classes)
    # The base class too, as in MMEngine.
    assert OPTIMIZERS.get("Optimizer") is torch.optim.Optimizer
    assert "Optimizer" in builder.TORCH_OPTIMIZERS
    assert (
        real_optimizer_class(OPTIMIZERS.get("ZeroRedundancyOptimizer")) is ZeroRedundancyOptimizer
    )


def test_register_torch_optimizers_returns_the_names_and_refuses_a_second_time():
    assert builder.register_torch_optimizers.__name__ == "register_torch_optimizers"
    with pytest.raises(KeyError, match=r"ASGD is already registered in optimizer at torch"):
        builder.register_torch_optimizers()


def test_no_npu_no_npu_optimizers():
    assert builder.NPU_OPTIMIZERS == []
    assert builder.register_torch_npu_optimizers() == []


def test_an_unknown_optimizer_type_is_a_key_error_with_the_closest_names():
    with pytest.raises(
        KeyError,
        match=r"Adamw is not in the treadle::optimizer registry.*"
        r"Did you mean 'AdamW'",
    ):
        OPTIMIZERS.build(dict(type="Adamw", params=[nn.Parameter(torch.zeros(1))]))
    with pytest.raises(KeyError, match=r"SDG is not in the treadle::optimizer registry.*'SGD'"):
        build_optim_wrapper(nn.Linear(2, 2), dict(optimizer=dict(type="SDG", lr=0.1)))


def test_build_optim_wrapper_defaults_to_the_default_constructor_and_optim_wrapper():
    model = nn.Linear(2, 2)
    cfg = dict(
        optimizer=dict(type="SGD", lr=0.1, momentum=0.9, weight_decay=1e-4),
        paramwise_cfg=dict(bias_decay_mult=0.0),
        accumulative_counts=2,
    )
    original = copy.deepcopy(cfg)
    optim_wrapper = build_optim_wrapper(model, cfg)
    assert type(optim_wrapper) is OptimWrapper
    assert type(optim_wrapper.optimizer) is torch.optim.SGD
    assert [g["weight_decay"] for g in optim_wrapper.optimizer.param_groups] == [1e-4, 0.0]
    assert optim_wrapper._accumulative_counts == 2
    assert cfg == original  # the user's config is not changed


def test_build_optim_wrapper_uses_the_constructor_the_config_names():
    seen = {}

    @OPTIM_WRAPPER_CONSTRUCTORS.register_module(force=True)
    class RecordingConstructor(DefaultOptimWrapperConstructor):
        def __init__(self, optim_wrapper_cfg, paramwise_cfg=None):
            seen["cfg"] = (dict(optim_wrapper_cfg), paramwise_cfg)
            super().__init__(optim_wrapper_cfg, paramwise_cfg)

    cfg = dict(
        constructor="RecordingConstructor",
        type="OptimWrapper",
        optimizer=dict(type="Adam", lr=1e-3),
        paramwise_cfg=dict(bias_lr_mult=2.0),
    )
    optim_wrapper = build_optim_wrapper(nn.Linear(2, 2), cfg)
    assert seen["cfg"] == (
        dict(type="OptimWrapper", optimizer=dict(type="Adam", lr=1e-3)),
        dict(bias_lr_mult=2.0),
    )
    assert [g["lr"] for g in optim_wrapper.optimizer.param_groups] == [1e-3, 2e-3]


def test_build_optim_wrapper_needs_a_dict_and_a_known_constructor():
    with pytest.raises(TypeError, match=r"build_optim_wrapper's cfg must be a dict.*got list"):
        build_optim_wrapper(nn.Linear(2, 2), [dict(type="SGD")])
    with pytest.raises(
        KeyError,
        match=r"DefaultOptimConstructor is not in the treadle::optimizer "
        r"wrapper constructor registry.*'DefaultOptimWrapperConstructor'",
    ):
        build_optim_wrapper(
            nn.Linear(2, 2),
            dict(constructor="DefaultOptimConstructor", optimizer=dict(type="SGD", lr=0.1)),
        )
    # The registry's message names the constructor; the error is MMEngine's AssertionError too.
    with pytest.raises(
        ValueError, match="`optim_wrapper_cfg` must contain the key 'optimizer'"
    ) as e:
        build_optim_wrapper(nn.Linear(2, 2), dict(type="OptimWrapper"))
    assert isinstance(e.value, AssertionError)


def test_on_a_half_precision_npu_a_plain_optim_wrapper_becomes_amp(monkeypatch):
    import treadle.runner.device as device

    calls = []

    @OPTIM_WRAPPER_CONSTRUCTORS.register_module(force=True)
    class TypeRecorder:
        def __init__(self, optim_wrapper_cfg, paramwise_cfg=None):
            calls.append(optim_wrapper_cfg.get("type"))

        def __call__(self, model):
            return model

    monkeypatch.setattr(device, "is_npu_available", lambda: True)
    monkeypatch.setattr(device, "is_npu_support_full_precision", lambda: False)
    optimizer = dict(type="SGD", lr=0.1)
    build_optim_wrapper(nn.Linear(1, 1), dict(constructor="TypeRecorder", optimizer=optimizer))
    build_optim_wrapper(
        nn.Linear(1, 1), dict(constructor="TypeRecorder", type="MyWrapper", optimizer=optimizer)
    )
    monkeypatch.setattr(device, "is_npu_support_full_precision", lambda: True)
    build_optim_wrapper(nn.Linear(1, 1), dict(constructor="TypeRecorder", optimizer=optimizer))
    assert calls == ["AmpOptimWrapper", "MyWrapper", None]


def test_zero_redundancy_optimizer_without_a_process_group_says_how_to_start_one():
    assert not torch.distributed.is_initialized()
    with pytest.raises(
        RuntimeError,
        match=r"torch\.distributed is not initialized: launch with "
        r"torchrun.*type='AdamW'",
    ):
        ZeroRedundancyOptimizer(nn.Linear(2, 2).parameters(), optimizer_type="AdamW", lr=0.1)
