"""Operator handles: how many flops (or activations) one operator costs, from its shapes.

A handle takes ``(inputs, outputs)``, the operator's arguments and results as
:class:`~treadle.runner.analysis.values.OpValue` lists in the order of the aten schema named by
its key (``aten::linear(input, weight, bias)``...), and returns a number or a Counter keyed by
the name to report. One fused multiply-add counts as one flop, as in MMEngine (PyTorch's
``torch.utils.flop_counter`` counts two: where its shape formulas fit, they are used halved).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import torch
from torch.utils import flop_counter

from treadle.runner.analysis.values import get_shape

#: A handle: (inputs, outputs) -> a count, or a Counter of counts by reported operator name.
Handle = Callable[[list[Any], list[Any]], "int | float | Counter[str]"]


def _shape(val: Any, op: str, what: str) -> list[int]:
    shape = get_shape(val)
    if shape is None:
        raise ValueError(f"{op}: its {what} has no known tensor shape (got {val!r})")
    return shape


def generic_activation_jit(op_name: str | None = None) -> Handle:
    """A handle counting the elements of the operator's first output as its activations.

    Example:
        >>> import torch
        >>> from treadle.runner.analysis.values import OpValue
        >>> generic_activation_jit('conv')([], [OpValue(torch.zeros(2, 5))])
        Counter({'conv': 10})
    """

    def count_activations(inputs: list[Any], outputs: list[Any]) -> int | Counter[str]:
        n = math.prod(_shape(outputs[0], op_name or "activation", "output"))
        return n if op_name is None else Counter({op_name: n})

    return count_activations


def addmm_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``aten::addmm(bias, mat1, mat2)``: rows x inner x columns."""
    a = _shape(inputs[1], "addmm", "mat1")
    b = _shape(inputs[2], "addmm", "mat2")
    if len(a) != 2 or len(b) != 2:
        raise ValueError(f"addmm takes two matrices, got shapes {a} and {b}")
    return a[0] * a[1] * b[1]


def linear_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``aten::linear(input, weight, bias)``: every input element times the output features."""
    x = _shape(inputs[0], "linear", "input")
    w = _shape(inputs[1], "linear", "weight")
    out_features = w[0] if len(w) == 2 else 1
    return math.prod(x) * out_features


def bmm_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``aten::bmm(a, b)`` (and baddbmm's two batches): batch x rows x inner x columns."""
    a = _shape(inputs[-2], "bmm", "first batch")
    b = _shape(inputs[-1], "bmm", "second batch")
    if len(a) != 3 or len(b) != 3:
        raise ValueError(f"bmm takes two 3-d batches, got shapes {a} and {b}")
    return a[0] * a[1] * a[2] * b[2]


def baddbmm_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``aten::baddbmm(input, batch1, batch2)``: as bmm (MMEngine leaves it uncounted)."""
    return bmm_flop_jit(inputs[1:3], outputs)


def matmul_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``aten::matmul`` and ``aten::mm``: the broadcast batch x rows x inner x columns."""
    a = _shape(inputs[0], "matmul", "first operand")
    b = _shape(inputs[1], "matmul", "second operand")
    a = [1, *a] if len(a) == 1 else a
    b = [*b, 1] if len(b) == 1 else b
    if a[-1] != b[-2]:
        raise ValueError(f"matmul of shapes {a} and {b}: inner sizes differ")
    # The batch is the broadcast of both batch shapes (MMEngine takes the first operand's only).
    batch = math.prod(torch.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2])))
    return batch * a[-2] * a[-1] * b[-1]


def conv_flop_count(
    x_shape: list[int], w_shape: list[int], out_shape: list[int], transposed: bool = False
) -> int:
    """Multiply-adds of a convolution (bias left out): batch x weight elements x positions.

    The positions are the output's for a convolution and the input's for a transposed one.

    Example:
        >>> conv_flop_count([1, 3, 10, 10], [10, 3, 1, 1], [1, 10, 10, 10])
        3000
    """
    return int(flop_counter.conv_flop_count(x_shape, w_shape, out_shape, transposed)) // 2


def conv_flop_jit(inputs: list[Any], outputs: list[Any]) -> Counter[str]:
    """``aten::_convolution(input, weight, bias, stride, padding, dilation, transposed, ...)``."""
    x = _shape(inputs[0], "conv", "input")
    w = _shape(inputs[1], "conv", "weight")
    out = _shape(outputs[0], "conv", "output")
    transposed = bool(inputs[6].toIValue())
    return Counter({"conv": conv_flop_count(x, w, out, transposed)})


def einsum_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``aten::einsum(equation, tensors)``: the multiply-adds of a cheapest contraction order.

    Exact integer counts (MMEngine reads numpy's printed estimate, rounded to four digits).
    """
    equation = str(inputs[0].toIValue()).replace(" ", "")
    shapes = [_shape(v, "einsum", "operand") for v in inputs[1].node().inputs()]
    lhs, _, rhs = equation.partition("->")
    terms = lhs.split(",")
    if "." in equation or len(terms) != len(shapes):
        raise ValueError(f"einsum {equation!r}: ellipsis or operand count not supported")
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, shapes, strict=True):
        if len(term) != len(shape):
            raise ValueError(f"einsum {equation!r}: term {term!r} for an operand of shape {shape}")
        sizes.update(zip(term, shape, strict=True))
    if not rhs and "->" not in equation:
        rhs = "".join(sorted(c for c in sizes if lhs.count(c) == 1))
    if len(terms) == 1:
        return math.prod(sizes.values())
    return _contraction_cost([set(t) for t in terms], set(rhs), sizes)


def _contraction_cost(terms: list[set[str]], keep: set[str], sizes: dict[str, int]) -> int:
    # Greedy pairwise order (the cheapest pair first): exact for the two-operand einsums that
    # models use, and a sound estimate for longer chains.
    total = 0
    terms = list(terms)
    while len(terms) > 1:
        pairs = [(i, j) for i in range(len(terms)) for j in range(i + 1, len(terms))]
        cost, i, j = min((math.prod(sizes[c] for c in terms[i] | terms[j]), i, j) for i, j in pairs)
        letters = terms[i] | terms[j]
        others = set().union(*(t for k, t in enumerate(terms) if k not in (i, j)))
        result = {c for c in letters if c in keep or c in others}
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [result]
        total += cost
    return total


def scaled_dot_product_attention_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``aten::scaled_dot_product_attention(q, k, v, ...)``: the two batched matrix products.

    MMEngine leaves this operator uncounted; treadle counts q·kᵀ and the weighted sum of v.
    """
    q = _shape(inputs[0], "scaled_dot_product_attention", "query")
    k = _shape(inputs[1], "scaled_dot_product_attention", "key")
    v = _shape(inputs[2], "scaled_dot_product_attention", "value")
    batch_and_queries = math.prod(q[:-1])
    return batch_and_queries * k[-2] * (q[-1] + v[-1])


def norm_flop_counter(affine_arg_index: int) -> Handle:
    """A handle for normalization layers: 5 flops per element with an affine weight, else 4.

    ``affine_arg_index`` is where the weight sits among the operator's inputs.
    """

    def norm_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
        shape = _shape(inputs[0], "norm", "input")
        has_affine = get_shape(inputs[affine_arg_index]) is not None
        return math.prod(shape) * (5 if has_affine else 4)

    return norm_flop_jit


def batchnorm_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``aten::batch_norm``: as a norm layer when training, else 2 flops per element (1 without
    affine weight), since in inference the statistics are constants."""
    training = inputs[5].toIValue()
    if not isinstance(training, bool):
        raise ValueError(f"batch_norm: its 'training' argument is {training!r}, not a bool")
    if training:
        return norm_flop_counter(1)(inputs, outputs)
    has_affine = get_shape(inputs[1]) is not None
    return math.prod(_shape(inputs[0], "batch_norm", "input")) * (2 if has_affine else 1)


def elementwise_flop_counter(input_scale: float = 1, output_scale: float = 0) -> Handle:
    """A handle counting ``input elements * input_scale + output elements * output_scale``."""

    def elementwise_flop(inputs: list[Any], outputs: list[Any]) -> int | float:
        count: int | float = 0
        if input_scale != 0:
            count += input_scale * math.prod(_shape(inputs[0], "elementwise", "input"))
        if output_scale != 0:
            count += output_scale * math.prod(_shape(outputs[0], "elementwise", "output"))
        return count

    return elementwise_flop
