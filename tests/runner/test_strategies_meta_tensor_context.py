"""MetaTensorContext: tensors created inside it are on the meta device, even when asked for
another device; operations on existing tensors are unchanged."""

import torch

from treadle.runner.strategies import MetaTensorContext


def test_constructors_land_on_meta_whatever_device_is_named():
    with MetaTensorContext():
        layer = torch.nn.Linear(4, 3)
        named = torch.zeros(2, device="cpu")
        positional_sizes = torch.empty(2, 3)
        ranged = torch.arange(5)
    assert layer.weight.is_meta and layer.bias.is_meta
    assert layer.weight.shape == (3, 4)
    assert named.is_meta and positional_sizes.shape == (2, 3) and ranged.is_meta


def test_existing_tensors_and_code_after_the_context_are_untouched():
    real = torch.ones(3)
    with MetaTensorContext():
        doubled = real * 2
    assert not doubled.is_meta and doubled.tolist() == [2.0, 2.0, 2.0]
    assert not torch.zeros(1).is_meta
