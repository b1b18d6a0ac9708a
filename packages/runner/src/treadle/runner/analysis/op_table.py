"""Which torch functions are the operators MMEngine counts, and their arguments in aten order.

MMEngine counts the operators a jit trace records: ``aten::linear``, ``aten::matmul``,
``aten::_convolution``, ``aten::batch_norm``... Those are the torch functions a model calls
(``F.linear``, ``torch.matmul``, ``F.conv2d``, ``F.batch_norm``), before PyTorch lowers them to
the kernels that ``torch.utils.flop_counter``'s dispatch level sees (``addmm``, ``convolution``,
``_native_batch_norm_legit``), where a linear layer and a matmul are no longer told apart. So
treadle records at the function level (a ``TorchFunctionMode``) and names each call the way
the trace would. Each reader turns one call into the operators it stands for:
``[(kind, inputs, outputs)]``, the inputs in the order of the aten schema that MMEngine's
handles index into.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from treadle.runner.analysis.values import OpValue

Op = tuple[str, list[OpValue], list[OpValue]]
Reader = Callable[[tuple[Any, ...], dict[str, Any], Any], list[Op]]


def _bind(args: tuple[Any, ...], kwargs: dict[str, Any], names: str) -> list[Any]:
    # names: "input weight bias=None ..." in the order of the Python signature.
    params = [p.partition("=") for p in names.split()]
    values = list(args[: len(params)])
    for name, has_default, default in params[len(values) :]:
        if name in kwargs:
            values.append(kwargs[name])
        elif has_default:
            values.append(ast.literal_eval(default))
        else:
            values.append(None)
    return values


def _bound(args: tuple[Any, ...], kwargs: dict[str, Any], names: str) -> dict[str, Any]:
    keys = [p.partition("=")[0] for p in names.split()]
    return dict(zip(keys, _bind(args, kwargs, names), strict=True))


def _values(*raw: Any) -> list[OpValue]:
    return [OpValue(v) for v in raw]


def _outputs(result: Any) -> list[OpValue]:
    if isinstance(result, (tuple, list)):
        return [OpValue(r) for r in result]
    return [OpValue(result)]


def _simple(kind: str, names: str, order: str | None = None) -> Reader:
    """A call that is one operator; ``order`` lists the aten schema's arguments by name."""

    def read(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> list[Op]:
        bound = _bound(args, kwargs, names)
        schema = (order or names).split()
        return [
            (kind, _values(*(bound.get(n.partition("=")[0]) for n in schema)), _outputs(result))
        ]

    return read


def _conv(transposed: bool) -> Reader:
    names = (
        "input weight bias=None stride=1 padding=0 output_padding=0 groups=1 dilation=1"
        if transposed
        else "input weight bias=None stride=1 padding=0 dilation=1 groups=1"
    )

    def read(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> list[Op]:
        b = _bound(args, kwargs, names)
        # aten::_convolution's 13 arguments; the trailing cudnn flags are not known here.
        inputs = _values(
            b["input"], b["weight"], b["bias"], b["stride"], b["padding"], b["dilation"],
            transposed, b.get("output_padding", 0), b["groups"], False, False, True, True,
        )  # fmt: skip
        return [("aten::_convolution", inputs, _outputs(result))]

    return read


def _convolution(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> list[Op]:
    names = "input weight bias stride padding dilation transposed output_padding groups"
    values = _bind(args, kwargs, names)
    inputs = _values(*values, False, False, True, True)
    return [("aten::_convolution", inputs, _outputs(result))]


def _einsum(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> list[Op]:
    equation, *operands = args
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = list(operands[0])
    return [("aten::einsum", _values(equation, operands, None), _outputs(result))]


_INTERPOLATE_KIND = {
    "nearest": "upsample_nearest",
    "nearest-exact": "_upsample_nearest_exact",
    "linear": "upsample_linear",
    "bilinear": "upsample_bilinear",
    "bicubic": "upsample_bicubic",
    "trilinear": "upsample_trilinear",
    "area": "adaptive_avg_pool",
}


def _interpolate(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> list[Op]:
    names = "input size=None scale_factor=None mode='nearest' align_corners=None"
    x, size, scale, mode, _ = _bind(args, kwargs, names)
    kind = f"aten::{_INTERPOLATE_KIND.get(mode, 'upsample_' + str(mode))}{x.dim() - 2}d"
    return [(kind, _values(x, size, scale), _outputs(result))]


def _grid_sample(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> list[Op]:
    names = "input grid mode='bilinear' padding_mode='zeros' align_corners=None"
    return [("aten::grid_sampler", _values(*_bind(args, kwargs, names)), _outputs(result))]


def _rmatmul(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> list[Op]:
    return [("aten::matmul", _values(args[1], args[0]), _outputs(result))]


def _shape_value(*shape: int) -> OpValue:
    return OpValue(shape=shape)


def _multi_head_attention(args: tuple[Any, ...], kwargs: dict[str, Any], result: Any) -> list[Op]:
    # F.multi_head_attention_forward is one Python function around several operators; it is
    # recorded as the operators it runs: the input projections (linear), the attention
    # (bmm, baddbmm with a mask, or scaled_dot_product_attention without weights), the output
    # projection (linear). Shapes: query (L, N, E) or (L, E); key and value (S, ...).
    names = (
        "query key value embed_dim_to_check num_heads in_proj_weight in_proj_bias bias_k bias_v "
        "add_zero_attn dropout_p out_proj_weight out_proj_bias training=True "
        "key_padding_mask=None need_weights=True attn_mask=None use_separate_proj_weight=False "
        "q_proj_weight=None k_proj_weight=None v_proj_weight=None static_k=None static_v=None "
        "average_attn_weights=True is_causal=False"
    )
    b = _bound(args, kwargs, names)
    query, key, value = b["query"], b["key"], b["value"]
    batched = query.dim() == 3
    length = query.shape[0]
    batch = query.shape[1] if batched else 1
    embed = query.shape[-1]
    heads = b["num_heads"]
    head_dim = embed // heads
    ops: list[Op] = []
    if b["use_separate_proj_weight"]:
        projections = [
            (query, b["q_proj_weight"]), (key, b["k_proj_weight"]), (value, b["v_proj_weight"]),
        ]  # fmt: skip
    elif key is value and query is key:
        projections = [(query, b["in_proj_weight"])]
    elif key is value:
        w_q, w_kv = b["in_proj_weight"].split([embed, 2 * embed])
        projections = [(query, w_q), (key, w_kv)]
    else:
        projections = list(zip((query, key, value), b["in_proj_weight"].chunk(3), strict=True))
    for x, w in projections:
        out_shape = [*x.shape[:-1], w.shape[0]]
        ops.append(("aten::linear", _values(x, w, None), [_shape_value(*out_shape)]))
    source = b["static_k"].shape[1] if b["static_k"] is not None else key.shape[0]
    source += (b["bias_k"] is not None) + bool(b["add_zero_attn"])
    q = _shape_value(batch * heads, length, head_dim)
    k_t = _shape_value(batch * heads, head_dim, source)
    weights = _shape_value(batch * heads, length, source)
    v = _shape_value(batch * heads, source, head_dim)
    attended = _shape_value(batch * heads, length, head_dim)
    if b["need_weights"]:
        if b["attn_mask"] is not None:
            ops.append(("aten::baddbmm", [weights, q, k_t], [weights]))
        else:
            ops.append(("aten::bmm", [q, k_t], [weights]))
        ops.append(("aten::softmax", [weights], [weights]))
        ops.append(("aten::bmm", [weights, v], [attended]))
    else:
        q4 = _shape_value(batch, heads, length, head_dim)
        kv4 = _shape_value(batch, heads, source, head_dim)
        ops.append(("aten::scaled_dot_product_attention", [q4, kv4, kv4], [q4]))
    out_shape = [length, batch, embed] if batched else [length, embed]
    attended_rows = _shape_value(length * batch, embed)
    out_proj = [attended_rows, OpValue(b["out_proj_weight"]), OpValue(None)]
    ops.append(("aten::linear", out_proj, [_shape_value(*out_shape)]))
    return ops


def _readers() -> dict[Any, Reader]:
    T = torch.Tensor
    matmul = _simple("aten::matmul", "input other")
    mm = _simple("aten::mm", "input mat2")
    bmm = _simple("aten::bmm", "input mat2")
    addmm = _simple("aten::addmm", "input mat1 mat2 beta=1 alpha=1")
    baddbmm = _simple("aten::baddbmm", "input batch1 batch2 beta=1 alpha=1")
    batch_norm_aten = "input weight bias running_mean running_var training momentum eps cudnn"
    instance_norm_aten = (
        "input weight bias running_mean running_var use_input_stats momentum eps cudnn"
    )
    table: dict[Any, Reader] = {
        F.linear: _simple("aten::linear", "input weight bias=None"),
        torch.matmul: matmul, T.matmul: matmul, T.__matmul__: matmul, T.__rmatmul__: _rmatmul,
        torch.mm: mm, T.mm: mm,
        torch.bmm: bmm, T.bmm: bmm,
        torch.addmm: addmm, T.addmm: addmm,
        torch.baddbmm: baddbmm, T.baddbmm: baddbmm,
        torch.einsum: _einsum,
        torch.conv1d: _conv(False), torch.conv2d: _conv(False), torch.conv3d: _conv(False),
        torch.conv_transpose1d: _conv(True), torch.conv_transpose2d: _conv(True),
        torch.conv_transpose3d: _conv(True),
        torch.convolution: _convolution,
        F.batch_norm: _simple(
            "aten::batch_norm",
            "input running_mean running_var weight=None bias=None training=False momentum=0.1 "
            "eps=1e-05",
            batch_norm_aten,
        ),
        torch.batch_norm: _simple("aten::batch_norm", batch_norm_aten),
        F.instance_norm: _simple(
            "aten::instance_norm",
            "input running_mean=None running_var=None weight=None bias=None "
            "use_input_stats=True momentum=0.1 eps=1e-05",
            instance_norm_aten,
        ),
        torch.instance_norm: _simple("aten::instance_norm", instance_norm_aten),
        F.layer_norm: _simple(
            "aten::layer_norm",
            "input normalized_shape weight=None bias=None eps=1e-05",
            "input normalized_shape weight bias eps cudnn",
        ),
        torch.layer_norm: _simple("aten::layer_norm", "input normalized_shape weight bias eps"),
        F.group_norm: _simple(
            "aten::group_norm",
            "input num_groups weight=None bias=None eps=1e-05",
            "input num_groups weight bias eps cudnn",
        ),
        torch.group_norm: _simple("aten::group_norm", "input num_groups weight bias eps"),
        F.interpolate: _interpolate,
        F.adaptive_avg_pool2d: _simple("aten::adaptive_avg_pool2d", "input output_size"),
        torch._C._nn.adaptive_avg_pool2d: _simple("aten::adaptive_avg_pool2d", "input output_size"),
        F.grid_sample: _grid_sample,
        torch.grid_sampler: _simple(
            "aten::grid_sampler", "input grid interpolation_mode padding_mode align_corners"
        ),
        F.scaled_dot_product_attention: _simple(
            "aten::scaled_dot_product_attention",
            "query key value attn_mask=None dropout_p=0.0 is_causal=False scale=None "
            "enable_gqa=False",
        ),
        F.multi_head_attention_forward: _multi_head_attention,
    }  # fmt: skip
    return table


READERS: dict[Any, Reader] = _readers()

# Names for functions whose __name__ says nothing (boolean_dispatch wrappers are all "fn").
_FUNCTIONAL_NAMES = {id(obj): name for name, obj in vars(F).items() if callable(obj)}


def op_kind(func: Any) -> str:
    """The aten-style name of a torch function that no reader knows, e.g. ``aten::softmax``.

    Example:
        >>> import torch
        >>> op_kind(torch.Tensor.__add__), op_kind(torch.Tensor.__iadd__)
        ('aten::add', 'aten::add_')
    """
    name = _FUNCTIONAL_NAMES.get(id(func)) or getattr(func, "__name__", None) or repr(func)
    if name.startswith("__") and name.endswith("__"):
        name = name[2:-2]
        if name.startswith("i") and name[1:] in _INPLACE_OPERATORS:
            name = name[1:] + "_"
        elif name.startswith("r") and name[1:] in _INPLACE_OPERATORS:
            name = name[1:]
    name = name.lstrip("_")
    return "aten::" + _ATEN_SPELLING.get(name, name)


# Python operator names whose aten operator is spelled differently.
_ATEN_SPELLING = {
    "truediv": "div",
    "truediv_": "div_",
    "floordiv": "floor_divide",
    "mod": "remainder",
}


_INPLACE_OPERATORS = {
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift",
    "rshift", "matmul",
}  # fmt: skip
