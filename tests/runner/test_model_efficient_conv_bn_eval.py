"""Efficient Conv+BN in eval mode: the folded convolution equals conv then BN in eval mode, in
outputs and gradients; BN in train mode is untouched; the fx rewrite keeps shared convs."""

import pytest
import torch
from torch import nn

from treadle.runner.model.efficient_conv_bn_eval import (
    efficient_conv_bn_eval_control,
    efficient_conv_bn_eval_forward,
    turn_on_efficient_conv_bn_eval,
)


def _trained_bn(bn: nn.modules.batchnorm._BatchNorm) -> nn.Module:
    with torch.no_grad():
        bn.running_mean.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
        if bn.affine:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-1, 1)
    return bn.eval()


@pytest.mark.parametrize(
    ("conv", "bn", "shape"),
    [
        (nn.Conv2d(3, 4, 3, bias=False), nn.BatchNorm2d(4), (2, 3, 8, 8)),
        (nn.Conv2d(3, 4, 3, padding=1, groups=1), nn.BatchNorm2d(4, affine=False), (2, 3, 6, 6)),
        (nn.Conv1d(2, 6, 3, groups=2), nn.BatchNorm1d(6), (2, 2, 10)),
        (nn.Conv3d(2, 3, 1), nn.BatchNorm3d(3), (1, 2, 4, 4, 4)),
    ],
)
def test_folded_forward_and_gradients_equal_conv_then_bn(conv, bn, shape):
    torch.manual_seed(0)
    bn = _trained_bn(bn)
    x = torch.randn(shape)
    expected = bn(conv(x))
    expected.square().sum().backward()
    grads = [p.grad.clone() for p in (*conv.parameters(), *bn.parameters())]
    conv.zero_grad(), bn.zero_grad()
    got = efficient_conv_bn_eval_forward(bn, conv, x)
    got.square().sum().backward()
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    have_grads = [p.grad for p in (*conv.parameters(), *bn.parameters())]
    for want, have in zip(grads, have_grads, strict=True):
        torch.testing.assert_close(have, want, atol=1e-4, rtol=1e-4)


def test_control_keeps_training_bn_as_it_is():
    conv, bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4).eval()
    x = torch.randn(2, 3, 5, 5)
    torch.testing.assert_close(efficient_conv_bn_eval_control(bn, conv, x), bn(conv(x)))
    bn.train()
    out = efficient_conv_bn_eval_control(bn, conv, x)
    assert bn.num_batches_tracked.item() == 1  # BN's own training forward ran
    torch.testing.assert_close(out.mean((0, 2, 3)), torch.zeros(4), atol=1e-5, rtol=0)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
        self.shared = nn.Conv2d(4, 4, 1)
        self.shared_bn = nn.BatchNorm2d(4)

    def forward(self, x):
        y = self.shared(self.backbone(x))
        return self.shared_bn(y) + y  # y is used twice: this pair stays as it is


def _eval_net() -> Net:
    torch.manual_seed(0)
    model = Net()
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            _trained_bn(module)
    return model


@pytest.mark.parametrize("modules", [["backbone"], ""])
def test_turn_on_rewrites_the_named_submodules(modules):
    model = _eval_net()
    x = torch.randn(2, 3, 7, 7)
    expected = model(x)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    turn_on_efficient_conv_bn_eval(model, modules)  # '' is the model itself
    torch.testing.assert_close(model(x), expected, atol=1e-5, rtol=1e-5)
    assert model.state_dict().keys() == state.keys()
    code = model.forward.__self__.code if modules == "" else model.backbone.forward.__self__.code
    assert code.count("efficient_conv_bn_eval_control(") == 1  # the shared conv's pair is kept
    model.train()  # train mode: BN normalizes with batch statistics again
    assert not torch.allclose(model(x), expected, atol=1e-3)


def test_unknown_submodule_is_named():
    with pytest.raises(AttributeError, match="no attribute `head`"):
        turn_on_efficient_conv_bn_eval(Net(), "head")
