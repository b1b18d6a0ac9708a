"""The init functions of treadle.runner.model: what each does to weight and bias, and the
arguments they refuse."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from treadle.runner.model import (
    bias_init_with_prob,
    caffe2_xavier_init,
    constant_init,
    kaiming_init,
    normal_init,
    trunc_normal_,
    trunc_normal_init,
    uniform_init,
    xavier_init,
)


def test_constant_init_fills_weight_and_bias():
    conv = nn.Conv2d(3, 4, 3)
    constant_init(conv, 0.5, bias=2)
    assert torch.all(conv.weight == 0.5)
    assert torch.all(conv.bias == 2)


def test_functions_skip_missing_weight_and_bias():
    no_bias = nn.Linear(3, 3, bias=False)
    constant_init(no_bias, 1.0, bias=5)
    assert torch.all(no_bias.weight == 1)
    relu = nn.ReLU()
    for init in (constant_init, normal_init, uniform_init, xavier_init, kaiming_init):
        args = (relu, 1.0) if init is constant_init else (relu,)
        init(*args)  # nothing to fill: no error
    norm = nn.LayerNorm(4, elementwise_affine=False)
    assert norm.weight is None
    normal_init(norm)
    assert norm.weight is None


def test_normal_init_draws_with_mean_and_std():
    torch.manual_seed(0)
    layer = nn.Linear(200, 200)
    normal_init(layer, mean=3, std=0.5, bias=1)
    assert layer.weight.mean().item() == pytest.approx(3, abs=0.02)
    assert layer.weight.std().item() == pytest.approx(0.5, abs=0.02)
    assert torch.all(layer.bias == 1)


def test_uniform_init_stays_in_range():
    layer = nn.Linear(50, 50)
    uniform_init(layer, a=-0.25, b=0.75, bias=0.1)
    assert layer.weight.min() >= -0.25 and layer.weight.max() <= 0.75
    assert torch.allclose(layer.bias, torch.full_like(layer.bias, 0.1))


def test_trunc_normal_init_stays_in_bounds():
    torch.manual_seed(0)
    layer = nn.Linear(100, 100)
    trunc_normal_init(layer, mean=0, std=1, a=-0.5, b=0.3, bias=0)
    assert layer.weight.min() >= -0.5 and layer.weight.max() <= 0.3
    assert layer.weight.min() < -0.45 and layer.weight.max() > 0.25


def test_trunc_normal_warns_when_mean_far_from_bounds():
    with pytest.warns(UserWarning, match=r"mean=10 is more than 2 std from \[a, b\]"):
        trunc_normal_(torch.empty(3), mean=10, std=1, a=-2, b=2)


def test_xavier_and_kaiming_match_torch():
    for distribution, torch_init in (
        ("uniform", nn.init.xavier_uniform_),
        ("normal", nn.init.xavier_normal_),
    ):
        ours, ref = nn.Linear(8, 4), torch.empty(4, 8)
        torch.manual_seed(1)
        xavier_init(ours, gain=2, bias=0.5, distribution=distribution)
        torch.manual_seed(1)
        torch_init(ref, gain=2)
        assert torch.equal(ours.weight, ref)
        assert torch.all(ours.bias == 0.5)
    ours, ref = nn.Conv2d(3, 6, 3), torch.empty(6, 3, 3, 3)
    torch.manual_seed(2)
    kaiming_init(ours, mode="fan_in", distribution="uniform")
    torch.manual_seed(2)
    nn.init.kaiming_uniform_(ref, a=0, mode="fan_in", nonlinearity="relu")
    assert torch.equal(ours.weight, ref)


def test_caffe2_xavier_is_kaiming_uniform_fan_in():
    ours, ref = nn.Conv2d(3, 6, 3), torch.empty(6, 3, 3, 3)
    torch.manual_seed(3)
    caffe2_xavier_init(ours, bias=0.2)
    torch.manual_seed(3)
    nn.init.kaiming_uniform_(ref, a=1, mode="fan_in", nonlinearity="leaky_relu")
    assert torch.equal(ours.weight, ref)
    assert torch.allclose(ours.bias, torch.full_like(ours.bias, 0.2))


def test_bad_distribution_is_refused():
    with pytest.raises(ValueError, match=r"xavier_init: distribution must be .* got 'gauss'"):
        xavier_init(nn.Linear(2, 2), distribution="gauss")
    with pytest.raises(ValueError, match=r"kaiming_init: distribution must be .* got 'x'"):
        kaiming_init(nn.Linear(2, 2), distribution="x")


def test_bias_init_with_prob():
    bias = bias_init_with_prob(0.01)
    assert 1 / (1 + math.exp(-bias)) == pytest.approx(0.01)
    assert bias_init_with_prob(0.5) == 0.0
    with pytest.raises(ValueError, match=r"prior_prob must be in \(0, 1\), got 1.5"):
        bias_init_with_prob(1.5)
