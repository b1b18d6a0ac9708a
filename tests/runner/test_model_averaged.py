"""Averaged models: the EMA, annealed EMA and SWA formulas, interval, buffers, state_dict
round trips, building from MODELS, and no device syncs in update_parameters."""

from __future__ import annotations

import copy

import pytest
import torch
from runner_toys import captured_log
from torch import nn

from treadle.runner.model import (
    BaseAveragedModel,
    ExponentialMovingAverage,
    MomentumAnnealingEMA,
    StochasticWeightAverage,
)
from treadle.runner.registry import MODELS


@pytest.fixture
def log():
    with captured_log() as capture:
        yield capture


def toy():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))


def set_weights(model, value):
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(value)


def test_first_update_copies_then_ema_formula():
    model = toy()
    ema = ExponentialMovingAverage(model, momentum=0.25)
    set_weights(model, 1.0)
    ema.update_parameters(model)
    assert torch.all(ema.module[0].weight == 1.0)
    set_weights(model, 3.0)
    ema.update_parameters(model)
    # averaged*(1-momentum) + source*momentum
    assert torch.allclose(ema.module[0].weight, torch.full((3, 3), 1.0 * 0.75 + 3.0 * 0.25))
    assert int(ema.steps) == 2
    assert not any(p.requires_grad for p in ema.module.parameters())


def test_interval_skips_updates():
    model = toy()
    ema = ExponentialMovingAverage(model, momentum=0.5, interval=2)
    set_weights(model, 0.0)
    ema.update_parameters(model)  # step 0: copy
    set_weights(model, 4.0)
    ema.update_parameters(model)  # step 1: skipped
    assert torch.all(ema.module[0].weight == 0.0)
    ema.update_parameters(model)  # step 2: averaged
    assert torch.all(ema.module[0].weight == 2.0)


def test_momentum_annealing():
    model = toy()
    ema = MomentumAnnealingEMA(model, momentum=0.01, gamma=2)
    assert ema.current_momentum(2) == 0.5
    assert ema.current_momentum(10_000) == 0.01
    set_weights(model, 0.0)
    ema.update_parameters(model)
    set_weights(model, 1.0)
    ema.update_parameters(model)  # steps=1: momentum 2/3
    assert torch.allclose(ema.module[0].weight, torch.full((3, 3), 2 / 3))


def test_swa_is_the_running_mean():
    model = toy()
    swa = StochasticWeightAverage(model)
    for value in (1.0, 2.0, 6.0):
        set_weights(model, value)
        swa.update_parameters(model)
    assert torch.allclose(swa.module[0].weight, torch.full((3, 3), 3.0))


def test_buffers_copied_or_averaged():
    model = toy()
    copied = ExponentialMovingAverage(model, momentum=0.5)
    averaged = ExponentialMovingAverage(model, momentum=0.5, update_buffers=True)
    for value in (0.0, 2.0):
        model[1].running_mean.fill_(value)
        model[1].num_batches_tracked.fill_(int(value) + 5)
        copied.update_parameters(model)
        averaged.update_parameters(model)
    assert torch.all(copied.module[1].running_mean == 2.0)
    assert torch.all(averaged.module[1].running_mean == 1.0)
    # a counter cannot be averaged: it follows the model
    assert int(averaged.module[1].num_batches_tracked) == 7


def test_averaging_follows_the_module_after_to():
    model = toy()
    ema = ExponentialMovingAverage(model, momentum=0.5, update_buffers=True)
    ema.double()
    model.double()
    model[1].running_mean.fill_(0.0)
    ema.update_parameters(model)
    model[1].running_mean.fill_(2.0)
    ema.update_parameters(model)
    assert ema.module[1].running_mean.dtype == torch.float64
    assert torch.all(ema.module[1].running_mean == 1.0)


def test_forward_runs_the_averaged_copy():
    model = toy().eval()
    ema = ExponentialMovingAverage(model).eval()
    x = torch.randn(2, 3)
    assert torch.equal(ema(x), model(x))


def test_state_dict_round_trip_keeps_steps():
    model = toy()
    ema = MomentumAnnealingEMA(model, momentum=0.01, gamma=4)
    for value in (1.0, 2.0, 3.0):
        set_weights(model, value)
        ema.update_parameters(model)
    state = ema.state_dict()
    assert int(state["steps"]) == 3 and "module.0.weight" in state
    restored = MomentumAnnealingEMA(toy(), momentum=0.01, gamma=4)
    restored.load_state_dict(state)
    assert int(restored.steps) == 3
    set_weights(model, 5.0)
    ema.update_parameters(model)
    restored.update_parameters(model)
    # same momentum after loading: the step count came back too
    assert torch.equal(ema.module[0].weight, restored.module[0].weight)


def test_build_from_models_registry():
    model = toy()
    ema = MODELS.build(dict(type="ExponentialMovingAverage", model=model, momentum=0.001))
    assert isinstance(ema, ExponentialMovingAverage) and ema.momentum == 0.001
    for name in ("MomentumAnnealingEMA", "StochasticWeightAverage"):
        assert isinstance(MODELS.build(dict(type=name, model=model)), BaseAveragedModel)


def test_device_argument():
    ema = ExponentialMovingAverage(toy(), device="cpu")
    assert ema.steps.device.type == "cpu"
    assert ema.module[0].weight.device.type == "cpu"


def test_no_device_sync_in_update(monkeypatch):
    model = toy()
    averagers = [
        ExponentialMovingAverage(model, interval=2),
        MomentumAnnealingEMA(model),
        StochasticWeightAverage(model, update_buffers=True),
    ]

    def forbidden(*args, **kwargs):
        raise AssertionError("device sync in update_parameters")

    for name in ("item", "__bool__", "__int__", "__float__", "__index__", "cpu", "tolist"):
        monkeypatch.setattr(torch.Tensor, name, forbidden)
    for _ in range(4):
        for averager in averagers:
            averager.update_parameters(model)
    monkeypatch.undo()
    assert [int(a.steps) for a in averagers] == [4, 4, 4]


class HalfWay(BaseAveragedModel):
    def avg_func(self, averaged_param, source_param, steps):
        averaged_param.add_(source_param - averaged_param, alpha=0.5)


class CustomEMA(ExponentialMovingAverage):
    def avg_func(self, averaged_param, source_param, steps):
        averaged_param.copy_(source_param * 10)


def test_subclass_avg_func_is_used():
    model = toy()
    halfway, custom = HalfWay(model), CustomEMA(model)
    set_weights(model, 0.0)
    halfway.update_parameters(model)
    custom.update_parameters(model)
    set_weights(model, 1.0)
    halfway.update_parameters(model)
    custom.update_parameters(model)
    assert torch.all(halfway.module[0].weight == 0.5)
    assert torch.all(custom.module[0].weight == 10.0)


def test_base_class_without_avg_func():
    model = toy()
    base = BaseAveragedModel(model)
    base.update_parameters(model)
    with pytest.raises(NotImplementedError, match=r"BaseAveragedModel must implement avg_func"):
        base.update_parameters(model)


def test_bad_arguments():
    # MMEngine asserts on both: the errors are ValueErrors and AssertionErrors.
    with pytest.raises(
        AssertionError, match=r"ExponentialMovingAverage: momentum must be in range \(0, 1\)"
    ) as caught:
        ExponentialMovingAverage(toy(), momentum=1.5)
    assert isinstance(caught.value, ValueError)
    with pytest.raises(
        AssertionError, match=r"MomentumAnnealingEMA: gamma must be greater than 0, got 0"
    ) as caught:
        MomentumAnnealingEMA(toy(), gamma=0)
    assert isinstance(caught.value, ValueError)
    with pytest.raises(ValueError, match=r"StochasticWeightAverage: interval must be a positive"):
        StochasticWeightAverage(toy(), interval=0)


def test_large_momentum_warns(log):
    ExponentialMovingAverage(toy(), momentum=0.9)
    assert any("momentum=0.9 is the weight of the new value" in m for m in log.messages)


def test_wrapped_model_is_named_in_the_error():
    model = toy()
    ema = ExponentialMovingAverage(model)

    class Wrapper(nn.Module):
        def __init__(self, module):
            super().__init__()
            self.module = module

    with pytest.raises(KeyError, match=r"Wrapper has no '0.weight'.*not its DDP/wrapper"):
        ema.update_parameters(Wrapper(copy.deepcopy(model)))


def test_replacing_the_averaged_module_is_followed():
    model = toy()
    ema = ExponentialMovingAverage(model, momentum=0.5)
    ema.update_parameters(model)
    ema.module = copy.deepcopy(model).requires_grad_(False)
    set_weights(ema.module, 0.0)
    set_weights(model, 2.0)
    ema.update_parameters(model)
    assert torch.all(ema.module[0].weight == 1.0)
    assert set(ema.avg_parameters) == {"0.weight", "0.bias", "1.weight", "1.bias"}
