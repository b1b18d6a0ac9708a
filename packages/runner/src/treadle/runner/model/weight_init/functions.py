"""The init functions: fill a layer's ``weight`` one way and its ``bias`` with a constant.

Each takes a module and touches only ``module.weight`` and ``module.bias`` when they exist and
are not None, so they can be applied blindly to every submodule of a model.
"""

from __future__ import annotations

import math
import warnings

import torch
from torch import Tensor, nn

_DISTRIBUTIONS = ("uniform", "normal")


def _weight(module: nn.Module) -> Tensor | None:
    return getattr(module, "weight", None)


def _fill_bias(module: nn.Module, bias: float) -> None:
    tensor = getattr(module, "bias", None)
    if tensor is not None:
        nn.init.constant_(tensor, bias)


def _check_distribution(distribution: str, function: str) -> None:
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(
            f"{function}: distribution must be 'uniform' or 'normal', got {distribution!r}"
        )


def constant_init(module: nn.Module, val: float, bias: float = 0) -> None:
    """Fill the weight with ``val`` and the bias with ``bias``.

    Example:
        >>> layer = nn.Linear(2, 3)
        >>> constant_init(layer, 1.0, bias=0.5)
        >>> float(layer.weight.detach().sum()), float(layer.bias.detach().sum())
        (6.0, 1.5)
    """
    weight = _weight(module)
    if weight is not None:
        nn.init.constant_(weight, val)
    _fill_bias(module, bias)


def xavier_init(
    module: nn.Module, gain: float = 1, bias: float = 0, distribution: str = "normal"
) -> None:
    """Glorot initialization of the weight (normal or uniform), constant bias."""
    _check_distribution(distribution, "xavier_init")
    weight = _weight(module)
    if weight is not None:
        if distribution == "uniform":
            nn.init.xavier_uniform_(weight, gain=gain)
        else:
            nn.init.xavier_normal_(weight, gain=gain)
    _fill_bias(module, bias)


def normal_init(module: nn.Module, mean: float = 0, std: float = 1, bias: float = 0) -> None:
    """Weight drawn from N(mean, std²), constant bias."""
    weight = _weight(module)
    if weight is not None:
        nn.init.normal_(weight, mean, std)
    _fill_bias(module, bias)


def trunc_normal_init(
    module: nn.Module,
    mean: float = 0,
    std: float = 1,
    a: float = -2,
    b: float = 2,
    bias: float = 0,
) -> None:
    """Weight drawn from N(mean, std²) truncated to [a, b], constant bias."""
    weight = _weight(module)
    if weight is not None:
        trunc_normal_(weight, mean, std, a, b)
    _fill_bias(module, bias)


def uniform_init(module: nn.Module, a: float = 0, b: float = 1, bias: float = 0) -> None:
    """Weight drawn from U(a, b), constant bias."""
    weight = _weight(module)
    if weight is not None:
        nn.init.uniform_(weight, a, b)
    _fill_bias(module, bias)


def kaiming_init(
    module: nn.Module,
    a: float = 0,
    mode: str = "fan_out",
    nonlinearity: str = "relu",
    bias: float = 0,
    distribution: str = "normal",
) -> None:
    """He initialization of the weight (normal or uniform), constant bias."""
    _check_distribution(distribution, "kaiming_init")
    weight = _weight(module)
    if weight is not None:
        init = nn.init.kaiming_uniform_ if distribution == "uniform" else nn.init.kaiming_normal_
        init(weight, a=a, mode=mode, nonlinearity=nonlinearity)
    _fill_bias(module, bias)


def caffe2_xavier_init(module: nn.Module, bias: float = 0) -> None:
    """Caffe2's ``XavierFill``, which is He-uniform with fan_in and a=1 in PyTorch's terms."""
    kaiming_init(
        module, a=1, mode="fan_in", nonlinearity="leaky_relu", bias=bias, distribution="uniform"
    )


def bias_init_with_prob(prior_prob: float) -> float:
    """The bias whose sigmoid is ``prior_prob`` (focal-loss style classifier heads).

    Example:
        >>> round(bias_init_with_prob(0.01), 4)
        -4.5951
    """
    if not 0 < prior_prob < 1:
        raise ValueError(f"bias_init_with_prob: prior_prob must be in (0, 1), got {prior_prob!r}")
    return float(-math.log((1 - prior_prob) / prior_prob))


def trunc_normal_(
    tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0
) -> Tensor:
    """Fill ``tensor`` in place from N(mean, std²) truncated to [a, b] and return it.

    Draws uniformly between the normal CDF's values at ``a`` and ``b`` and maps back through
    the inverse CDF, so every value is drawn once (no rejection loop); the result is clamped to
    absorb rounding at the edges.
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            f"trunc_normal_: mean={mean} is more than 2 std from [a, b] = [{a}, {b}]; the "
            "values drawn will not follow the requested distribution well",
            stacklevel=2,
        )

    def cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    low, high = cdf((a - mean) / std), cdf((b - mean) / std)
    with torch.no_grad():
        tensor.uniform_(2 * low - 1, 2 * high - 1)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
    return tensor
