"""FlopAnalyzer and ActivationAnalyzer, their one-call forms, and parameter counts."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from torch import nn

from treadle.runner.analysis.handles import (
    Handle,
    addmm_flop_jit,
    baddbmm_flop_jit,
    batchnorm_flop_jit,
    bmm_flop_jit,
    conv_flop_jit,
    einsum_flop_jit,
    elementwise_flop_counter,
    generic_activation_jit,
    linear_flop_jit,
    matmul_flop_jit,
    norm_flop_counter,
    scaled_dot_product_attention_flop_jit,
)
from treadle.runner.analysis.model_analysis import ModelAnalysis
from treadle.runner.analysis.tables import render_table

# The flop handles by operator: MMEngine's, plus attention and baddbmm, which it leaves out.
_DEFAULT_SUPPORTED_FLOP_OPS: dict[str, Handle] = {
    "aten::addmm": addmm_flop_jit,
    "aten::bmm": bmm_flop_jit,
    "aten::baddbmm": baddbmm_flop_jit,
    "aten::_convolution": conv_flop_jit,
    "aten::einsum": einsum_flop_jit,
    "aten::matmul": matmul_flop_jit,
    "aten::mm": matmul_flop_jit,
    "aten::linear": linear_flop_jit,
    "aten::scaled_dot_product_attention": scaled_dot_product_attention_flop_jit,
    # Batch norm folds into the preceding conv at inference: set_op_handle(
    # "aten::batch_norm", None) leaves it out.
    "aten::batch_norm": batchnorm_flop_jit,
    "aten::group_norm": norm_flop_counter(2),
    "aten::layer_norm": norm_flop_counter(2),
    "aten::instance_norm": norm_flop_counter(1),
    "aten::upsample_nearest2d": elementwise_flop_counter(0, 1),
    "aten::upsample_bilinear2d": elementwise_flop_counter(0, 4),
    "aten::adaptive_avg_pool2d": elementwise_flop_counter(1, 0),
    "aten::grid_sampler": elementwise_flop_counter(0, 4),  # as if bilinear
}

# The activation handles: the output size of convolutions and matrix products.
_DEFAULT_SUPPORTED_ACT_OPS: dict[str, Handle] = {
    "aten::_convolution": generic_activation_jit("conv"),
    "aten::addmm": generic_activation_jit(),
    "aten::bmm": generic_activation_jit(),
    "aten::baddbmm": generic_activation_jit(),
    "aten::einsum": generic_activation_jit(),
    "aten::matmul": generic_activation_jit(),
    "aten::mm": generic_activation_jit(),
    "aten::linear": generic_activation_jit(),
    "aten::scaled_dot_product_attention": generic_activation_jit(),
}


class FlopAnalyzer(ModelAnalysis):
    """Flops of a model and of each submodule, one fused multiply-add counting as one flop.

    Counts convolutions, linear layers, matrix products (matmul, mm, bmm, baddbmm, addmm,
    einsum), attention, normalization layers, upsampling, adaptive average pooling and grid
    sampling; ``set_op_handle`` adds or replaces handles. Flops are an estimate, not a timing.

    Args:
        model: the model to analyse.
        inputs: its input (a tuple is spread into the forward's arguments).

    Example:
        >>> import torch
        >>> from torch import nn
        >>> class Net(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.conv = nn.Conv2d(3, 10, kernel_size=1)
        ...         self.fc = nn.Linear(1000, 10)
        ...     def forward(self, x):
        ...         return self.fc(self.conv(x).flatten(1))
        >>> flops = FlopAnalyzer(Net(), (torch.randn(1, 3, 10, 10),))
        >>> flops.total(), flops.total('fc')
        (13000, 10000)
        >>> flops.by_operator()
        Counter({'linear': 10000, 'conv': 3000})
    """

    def __init__(self, model: nn.Module, inputs: Any) -> None:
        super().__init__(model=model, inputs=inputs)
        self.set_op_handle(**_DEFAULT_SUPPORTED_FLOP_OPS)


class ActivationAnalyzer(ModelAnalysis):
    """Activations (output elements of convolutions and matrix products) of a model and of
    each submodule.

    Args:
        model: the model to analyse.
        inputs: its input (a tuple is spread into the forward's arguments).

    Example:
        >>> import torch
        >>> model = torch.nn.Sequential(torch.nn.Conv2d(3, 10, 1), torch.nn.Flatten(),
        ...                             torch.nn.Linear(1000, 10))
        >>> acts = ActivationAnalyzer(model, (torch.randn(1, 3, 10, 10),))
        >>> acts.total(), acts.by_operator()
        (1010, Counter({'conv': 1000, 'linear': 10}))
    """

    def __init__(self, model: nn.Module, inputs: Any) -> None:
        super().__init__(model=model, inputs=inputs)
        self.set_op_handle(**_DEFAULT_SUPPORTED_ACT_OPS)


def flop_count(
    model: nn.Module, inputs: tuple[Any, ...], supported_ops: dict[str, Handle] | None = None
) -> tuple[defaultdict[str, float], Counter[str]]:
    """Giga-flops of the model by operator, and the count of each unsupported operator.

    ``supported_ops`` adds or replaces handles (see :class:`FlopAnalyzer`).

    Example:
        >>> import torch
        >>> gflops, unsupported = flop_count(torch.nn.Linear(1000, 1000), (torch.ones(1, 1000),))
        >>> dict(gflops), dict(unsupported)
        ({'linear': 0.001}, {})
    """
    analyzer = FlopAnalyzer(model, inputs).set_op_handle(**(supported_ops or {}))
    giga = defaultdict(float)
    for op, count in analyzer.by_operator().items():
        giga[op] = count / 1e9
    return giga, analyzer.unsupported_ops()


def activation_count(
    model: nn.Module, inputs: tuple[Any, ...], supported_ops: dict[str, Handle] | None = None
) -> tuple[defaultdict[str, float], Counter[str]]:
    """Mega-activations of the model by operator, and the count of each unsupported operator.

    Example:
        >>> import torch
        >>> acts, _ = activation_count(torch.nn.Linear(10, 1000), (torch.ones(1, 10),))
        >>> dict(acts)
        {'linear': 0.001}
    """
    analyzer = ActivationAnalyzer(model, inputs).set_op_handle(**(supported_ops or {}))
    mega = defaultdict(float)
    for op, count in analyzer.by_operator().items():
        mega[op] = count / 1e6
    return mega, analyzer.unsupported_ops()


def parameter_count(model: nn.Module) -> defaultdict[str, int]:
    """The number of parameter elements under every name: each parameter, each module, and
    "" for the whole model. A parameter shared by two modules counts once.

    Example:
        >>> import torch
        >>> dict(parameter_count(torch.nn.Sequential(torch.nn.Linear(3, 2))))
        {'': 8, '0': 8, '0.weight': 6, '0.bias': 2}
    """
    count: defaultdict[str, int] = defaultdict(int)
    for name, param in model.named_parameters():
        parts = name.split(".")
        for k in range(len(parts) + 1):
            count[".".join(parts[:k])] += param.numel()
    return count


def _short_size(x: int) -> str:
    # One decimal with K/M/G, as fvcore's parameter table prints sizes.
    for limit, scale, suffix in ((1e8, 1e9, "G"), (1e5, 1e6, "M"), (1e2, 1e3, "K")):
        if x > limit:
            return f"{x / scale:.1f}{suffix}"
    return str(x)


def parameter_count_table(model: nn.Module, max_depth: int = 3) -> str:
    """A table of parameter counts by module (and shapes of parameters), ``max_depth`` levels
    deep, in MMEngine's format.

    Example:
        >>> import torch
        >>> table = parameter_count_table(torch.nn.Sequential(torch.nn.Linear(3, 2)))
        >>> print(table, end='')  # doctest: +NORMALIZE_WHITESPACE
           parameter count of Sequential
        +------------+--------------------+
        | name       | #elements or shape |
        +------------+--------------------+
        | model      | 8                  |
        |  0         |  8                 |
        |   0.weight |   (2, 3)           |
        |   0.bias   |   (2,)             |
        +------------+--------------------+
    """
    if not isinstance(max_depth, int) or max_depth < 0:
        raise ValueError(f"parameter_count_table: max_depth must be an int >= 0, got {max_depth!r}")
    count = parameter_count(model)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    rows = [("model", _short_size(count.pop("", 0)))]

    def fill(level: int, prefix: str) -> None:
        if level >= max_depth:
            return
        for name, n in count.items():
            if name.count(".") == level and name.startswith(prefix):
                indent = " " * (level + 1)
                if name in shapes:
                    rows.append((indent + name, indent + str(shapes[name])))
                else:
                    rows.append((indent + name, indent + _short_size(n)))
                    fill(level + 1, name + ".")

    fill(0, "")
    return render_table(
        ["name", "#elements or shape"], rows, title=f"parameter count of {type(model).__name__}"
    )
