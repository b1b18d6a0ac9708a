"""Efficient Conv+BN in eval mode: fold a frozen BatchNorm into the convolution's weights.

A BatchNorm in eval mode is an affine map per channel, ``y = a * x + b``, and a convolution is
linear, so ``bn(conv(x))`` equals one convolution with weights scaled by ``a`` and a shifted
bias (the "Tune-Mode ConvBN" idea, arXiv:2305.11624). It computes one tensor less and keeps
one activation less for backward, which matters when fine-tuning with frozen BN statistics.
A BatchNorm in train mode is left as it is. ``cfg.efficient_conv_bn_eval = ['backbone']`` turns
it on for the named sub-modules of the Runner's model.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd


def _per_channel(bn: _BatchNorm, value: torch.Tensor | None, default: float) -> torch.Tensor:
    return value if value is not None else torch.full_like(bn.running_var, default)


def efficient_conv_bn_eval_forward(bn: _BatchNorm, conv: _ConvNd, x: torch.Tensor) -> torch.Tensor:
    """``bn(conv(x))`` for ``bn`` in eval mode, as one convolution with folded weights.

    Gradients reach ``conv``'s and ``bn``'s parameters as through the two modules.

    Example:
        >>> conv, bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4).eval()
        >>> x = torch.randn(1, 3, 8, 8)
        >>> torch.allclose(efficient_conv_bn_eval_forward(bn, conv, x), bn(conv(x)), atol=1e-6)
        True
    """
    # a = gamma / sqrt(var + eps), per output channel, shaped to scale the conv weight.
    scale = _per_channel(bn, bn.weight, 1.0) * torch.rsqrt(bn.running_var + bn.eps)
    weight = conv.weight * scale.reshape(-1, *([1] * (conv.weight.dim() - 1)))
    conv_bias = _per_channel(bn, conv.bias, 0.0)
    bias = _per_channel(bn, bn.bias, 0.0) + scale * (conv_bias - bn.running_mean)
    return conv._conv_forward(x, weight, bias)


def efficient_conv_bn_eval_control(bn: _BatchNorm, conv: _ConvNd, x: torch.Tensor) -> torch.Tensor:
    """The folded convolution while ``bn`` is in eval mode; ``bn(conv(x))`` while it trains."""
    if bn.training or bn.running_var is None:
        return bn(conv._conv_forward(x, conv.weight, conv.bias))
    return efficient_conv_bn_eval_forward(bn, conv, x)


def efficient_conv_bn_eval_graph_transform(fx_model: torch.fx.GraphModule) -> None:
    """Rewrite, in place, each conv node whose only user is a BatchNorm node into one call of
    :func:`efficient_conv_bn_eval_control` (a conv whose output is used elsewhere is kept)."""
    modules = dict(fx_model.named_modules())
    graph = fx_model.graph
    for bn_node in list(graph.nodes):
        conv_node = bn_node.args[0] if bn_node.args else None
        if not (
            bn_node.op == "call_module"
            and isinstance(modules.get(bn_node.target), _BatchNorm)
            and isinstance(conv_node, torch.fx.Node)
            and conv_node.op == "call_module"
            and isinstance(modules.get(conv_node.target), _ConvNd)
            and len(conv_node.users) == 1
        ):
            continue
        with graph.inserting_before(bn_node):
            bn_module = graph.get_attr(bn_node.target)
            conv_module = graph.get_attr(conv_node.target)
            fused = graph.call_function(
                efficient_conv_bn_eval_control, (bn_module, conv_module, conv_node.args[0])
            )
        bn_node.replace_all_uses_with(fused)
        graph.erase_node(bn_node)
        graph.erase_node(conv_node)
    graph.lint()
    fx_model.recompile()


def turn_on_efficient_conv_bn_eval_for_single_model(model: nn.Module) -> None:
    """Trace ``model`` with torch.fx and make its forward use the folded Conv+BN pairs (its
    parameters and state dict stay the same). Raises what torch.fx raises for a model that
    cannot be traced symbolically."""
    fx_model = torch.fx.symbolic_trace(model)
    efficient_conv_bn_eval_graph_transform(fx_model)
    model.forward = fx_model.forward  # type: ignore[method-assign]


def turn_on_efficient_conv_bn_eval(model: nn.Module, modules: list[str] | str) -> None:
    """Turn it on for each sub-module of ``model`` named in ``modules`` (``'backbone'``).

    Example:
        >>> model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)).eval()
        >>> turn_on_efficient_conv_bn_eval(model, '')  # '' is the model itself
    """
    for name in [modules] if isinstance(modules, str) else modules:
        turn_on_efficient_conv_bn_eval_for_single_model(model.get_submodule(name))


__all__ = [
    "efficient_conv_bn_eval_control",
    "efficient_conv_bn_eval_forward",
    "efficient_conv_bn_eval_graph_transform",
    "turn_on_efficient_conv_bn_eval",
    "turn_on_efficient_conv_bn_eval_for_single_model",
]
