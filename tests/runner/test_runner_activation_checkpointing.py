"""Activation checkpointing (cfg.activation_checkpointing, BaseStrategy.apply_activation_
checkpointing): chosen submodules recompute their activations in backward with non-reentrant
torch.utils.checkpoint, with the same gradients; unknown names are refused with the closest
ones."""

from __future__ import annotations

import pytest
import torch
from runner_toy_model import toy_cfg
from runner_toys import captured_log
from torch import nn

from treadle.runner.runner import Runner, turn_on_activation_checkpointing
from treadle.runner.strategies import SingleDeviceStrategy
from treadle.runner.strategies.activation_checkpointing import (
    apply_activation_checkpointing,
    is_checkpointed,
)


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


def test_runner_turns_on_efficient_conv_bn_eval_from_the_config(tmp_path):
    cfg = toy_cfg(tmp_path, default_hooks=dict(checkpoint=None))
    runner = Runner(**cfg, cfg=dict(efficient_conv_bn_eval=["head"]))
    with captured_log(runner.logger) as capture:
        runner.train()
    assert any('"efficient_conv_bn_eval" feature for sub-modules' in m for m in capture.messages)
    assert runner.iter == 12


# -- from every strategy: by name, class or predicate, non-reentrant --------------------------


class Blocks(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.blocks = nn.ModuleList(nn.Sequential(nn.Linear(2, 2), nn.Tanh()) for _ in range(2))
        self.out = nn.Linear(2, 1)

    def forward(self, x, y):
        for block in self.blocks:
            x = block(x)
        return self.out(x) * y


def checkpointed_names(model: nn.Module) -> list[str]:
    return [name for name, module in model.named_modules() if name and is_checkpointed(module)]


def test_non_reentrant_gives_gradients_when_no_input_needs_them():
    # The reentrant form would give the parameters inside no gradient here: the input of the
    # checkpointed module does not require grad.
    plain = gradients(Blocks())
    model = Blocks()
    apply_activation_checkpointing(model, modules="blocks.0")
    for expected, got in zip(plain, gradients(model), strict=True):
        assert torch.equal(expected, got)


def test_chosen_by_class_or_predicate_outermost_only():
    model = Blocks()
    # Sequential blocks hold Linear layers: only the outer modules are checkpointed.
    assert apply_activation_checkpointing(model, module_classes=["Sequential", nn.Linear]) == [
        "blocks.0",
        "blocks.1",
        "out",
    ]
    model = Blocks()
    assert apply_activation_checkpointing(model, check_fn=lambda m: isinstance(m, nn.Tanh)) == [
        "blocks.0.1",
        "blocks.1.1",
    ]
    assert checkpointed_names(model) == ["blocks.0.1", "blocks.1.1"]


def test_bad_choices_name_what_was_written():
    with pytest.raises(ValueError, match=r"no submodule of Blocks is a Sequentail; did you mean "
                       r"'Sequential'"):  # fmt: skip
        apply_activation_checkpointing(Blocks(), module_classes="Sequentail")
    with pytest.raises(TypeError, match=r"check_fn must be callable, got str"):
        apply_activation_checkpointing(Blocks(), check_fn="Tanh")
    strategy = SingleDeviceStrategy()
    with pytest.raises(TypeError, match=r"unknown keys \['module_class'\]; it takes modules, "):
        strategy.apply_activation_checkpointing(Blocks(), dict(module_class="Linear"))
    with pytest.raises(TypeError, match=r"must be a submodule name, a list of them.*got int"):
        strategy.apply_activation_checkpointing(Blocks(), 3)


def test_every_strategy_applies_it_inside_the_wrapper():
    from runner_toys import FakeDDP

    from treadle.runner.registry import MODEL_WRAPPERS

    MODEL_WRAPPERS.register_module(module=FakeDDP, force=True)
    try:
        wrapped = FakeDDP(Blocks())
        names = SingleDeviceStrategy().apply_activation_checkpointing(
            wrapped, dict(module_classes="Sequential")
        )
    finally:
        MODEL_WRAPPERS.module_dict.pop("FakeDDP", None)
    assert names == ["blocks.0", "blocks.1"]
    assert checkpointed_names(wrapped.module) == ["blocks.0", "blocks.1"]
