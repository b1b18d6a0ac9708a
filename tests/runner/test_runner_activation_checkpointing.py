"""cfg.activation_checkpointing: named submodules recompute their activations in backward,
with the same gradients; unknown names are refused with the closest ones."""

from __future__ import annotations

import logging

import pytest
import torch
from runner_toy_model import toy_cfg
from runner_toys import captured_log
from torch import nn

from treadle.runner.runner import Runner, turn_on_activation_checkpointing


def gradients(model: nn.Module) -> list[torch.Tensor]:
    torch.manual_seed(0)
    model(torch.randn(4, 2), y=torch.ones(4, 1)).sum().backward()
    return [parameter.grad.clone() for parameter in model.parameters()]


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.block = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 1))

    def forward(self, x, y):
        return self.block(x) * y


def test_checkpointed_modules_give_the_same_gradients():
    plain = gradients(Net())
    model = Net()
    turn_on_activation_checkpointing(model, ["block.0", "block"])
    turn_on_activation_checkpointing(model, "block")  # a second time changes nothing
    assert getattr(model.block.forward, "__treadle_checkpointed__", False)
    for expected, got in zip(plain, gradients(model), strict=True):
        assert torch.equal(expected, got)


def test_unknown_module_name_suggests_close_ones():
    with pytest.raises(
        AttributeError, match=r"names 'blok', which is not a submodule of Net; did you mean 'block'"
    ):
        turn_on_activation_checkpointing(Net(), "blok")


def test_runner_turns_it_on_from_the_config(tmp_path):
    cfg = toy_cfg(tmp_path, default_hooks=dict(checkpoint=None))
    runner = Runner(**cfg, cfg=dict(activation_checkpointing=["head.linear1"]))
    runner.train()
    assert getattr(runner.model.head.linear1.forward, "__treadle_checkpointed__", False)
    assert runner.iter == 12


def test_efficient_conv_bn_eval_is_ignored_with_a_warning(tmp_path):
    cfg = toy_cfg(tmp_path, default_hooks=dict(checkpoint=None))
    runner = Runner(**cfg, cfg=dict(efficient_conv_bn_eval=["head"]))
    with captured_log(runner.logger) as capture:
        runner.train()
    assert any("efficient_conv_bn_eval is not supported" in m for m in capture.at(logging.WARNING))
