"""Complexity reports: the per-module table, the model printout with statistics, and
get_model_complexity_info, in MMEngine's formats."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from treadle.runner.analysis.complexity_analysis import (
    ActivationAnalyzer,
    FlopAnalyzer,
    parameter_count,
)
from treadle.runner.analysis.tables import render_table

Stats = dict[str, dict[str, Any]]


def _format_size(x: float, sig_figs: int = 3, hide_zero: bool = False) -> str:
    """``x`` with a K/M/G/T/P suffix and up to ``sig_figs`` decimals, trailing zeros dropped.

    Example:
        >>> _format_size(13000), _format_size(1_234_567), _format_size(99)
        ('13K', '1.235M', '99')
    """
    if hide_zero and x == 0:
        return ""
    for limit, scale, suffix in ((1e14, 1e15, "P"), (1e11, 1e12, "T"), (1e8, 1e9, "G"),
                                 (1e5, 1e6, "M"), (1e2, 1e3, "K")):  # fmt: skip
        if abs(x) > limit:
            return f"{x / scale:.{sig_figs}f}".rstrip("0").rstrip(".") + suffix
    return str(x)


def _children(name: str, stats: Stats) -> list[str]:
    prefix = name + "." if name else ""
    depth = prefix.count(".")
    return [m for m in stats if m and m.count(".") == depth and m.startswith(prefix)]


def _by_module(columns: dict[str, dict[str, Any]]) -> Stats:
    out: Stats = {}
    for column, values in columns.items():
        for module, value in values.items():
            out.setdefault(module, {})[column] = value
    return out


def _drop_zero_rows(stats: Stats, keep: set[str], keep_parents: bool = False) -> Stats:
    # A module whose statistics are all zero is left out, unless it is in ``keep`` or, with
    # keep_parents, one of its descendants stays.
    out: Stats = {}

    def visit(name: str) -> None:
        kept_child = False
        for child in _children(name, stats):
            visit(child)
            kept_child |= child in out
        nonzero = any(v != 0 for v in stats[name].values())
        if nonzero or name in keep or (keep_parents and kept_child):
            out[name] = dict(stats[name])

    visit("")
    return out


def _pretty(stats: Stats, sig_figs: int = 3, hide_zero: bool = False) -> Stats:
    return {
        m: {k: _format_size(v, sig_figs, hide_zero) for k, v in s.items()} for m, s in stats.items()
    }


def _mark_uncalled(stats: Stats, column: str, uncalled: set[str], mark: str = "N/A") -> Stats:
    out = {m: dict(s) for m, s in stats.items()}
    for module in uncalled:
        out.setdefault(module, {})[column] = mark
    return out


def _fastforward(name: str, stats: Stats) -> tuple[str, dict[str, str]]:
    # A module with one child showing the same numbers shares its row with that child.
    while True:
        children = _children(name, stats)
        if len(children) != 1:
            return name, stats[name]
        child = children[0]
        mine, theirs = stats[name], stats[child]
        if set(mine) != set(theirs) or any(
            mine[k] != theirs[k] and mine[k] and theirs[k] for k in mine
        ):
            return name, stats[name]
        stats[child] = {k: mine[k] or theirs[k] for k in mine}
        name = child


def _stats_table(stats: Stats, max_depth: int, columns: list[str]) -> str:
    rows: list[list[str]] = []

    def row(name: str, values: dict[str, str], level: int) -> list[str]:
        indent = " " * level
        return [indent + name] + [indent + values[c] if c in values else "" for c in columns]

    def fill(level: int, prefix: str) -> None:
        if level > max_depth:
            return
        for name in list(stats):
            if name and name.count(".") == prefix.count(".") and name.startswith(prefix):
                name, values = _fastforward(name, stats)
                shown = (
                    name[len(root_prefix) :]
                    if root_prefix and name.startswith(root_prefix)
                    else name
                )
                rows.append(row(shown, values, level))
                fill(level + 1, name + ".")

    root, values = _fastforward("", stats)
    rows.append(row(root or "model", values, 0))
    root_prefix = root + "." if root else ""
    fill(1, root_prefix)
    return render_table(["module", *columns], rows)


def _quiet(analyzer: Any) -> None:
    analyzer.unsupported_ops_warnings(False)
    analyzer.uncalled_modules_warnings(False)
    analyzer.tracer_warnings("none")


def complexity_stats_table(
    flops: FlopAnalyzer,
    max_depth: int = 3,
    activations: ActivationAnalyzer | None = None,
    show_param_shapes: bool = True,
) -> str:
    """A table of parameters, flops (and activations) by module, ``max_depth`` levels deep.

    Example:
        >>> import torch
        >>> model = torch.nn.Sequential(torch.nn.Linear(10, 10))
        >>> print(complexity_stats_table(FlopAnalyzer(model, (torch.ones(1, 10),))), end='')
        +---------+----------------------+--------+
        | module  | #parameters or shape | #flops |
        +---------+----------------------+--------+
        | 0       | 0.11K                | 100    |
        |  weight |  (10, 10)            |        |
        |  bias   |  (10,)               |        |
        +---------+----------------------+--------+
    """
    params_header = "#parameters" + (" or shape" if show_param_shapes else "")
    model = flops._model
    _quiet(flops)
    columns = {params_header: dict(parameter_count(model)), "#flops": flops.by_module()}
    if activations is not None:
        _quiet(activations)
        columns["#activations"] = activations.by_module()
    stats = _drop_zero_rows(_by_module(columns), keep=set(), keep_parents=True)
    stats = _pretty(stats)
    stats = _mark_uncalled(stats, "#flops", flops.uncalled_modules() & stats.keys(), "")
    if activations is not None:
        stats = _mark_uncalled(
            stats, "#activations", activations.uncalled_modules() & stats.keys(), ""
        )
    for name, param in model.named_parameters():
        if name in stats:
            if show_param_shapes:
                stats[name][params_header] = str(tuple(param.shape))
            else:
                del stats[name]
    return _stats_table(stats, max_depth, list(columns))


def complexity_stats_str(flops: FlopAnalyzer, activations: ActivationAnalyzer | None = None) -> str:
    """The model printed like ``str(model)``, each module followed by its parameters, flops
    (and activations); modules whose numbers are all zero are left bare, and uncalled modules
    show N/A (what they computed is counted in their caller).

    Example:
        >>> import torch
        >>> model = torch.nn.Sequential(torch.nn.Linear(10, 10))
        >>> print(complexity_stats_str(FlopAnalyzer(model, (torch.ones(1, 10),))))
        Sequential(
          #params: 0.11K, #flops: 100
          (0): Linear(
            in_features=10, out_features=10, bias=True
            #params: 0.11K, #flops: 100
          )
        )
    """
    model = flops._model
    _quiet(flops)
    columns: dict[str, dict[str, Any]] = {
        "#params": dict(parameter_count(model)),
        "#flops": flops.by_module(),
    }
    uncalled = set(flops.uncalled_modules())
    if activations is not None:
        _quiet(activations)
        columns["#acts"] = activations.by_module()
        uncalled |= activations.uncalled_modules()
    for name, _ in model.named_modules():
        for values in columns.values():
            values.setdefault(name, 0)
    stats = _pretty(_drop_zero_rows(_by_module(columns), keep=uncalled), sig_figs=2)
    stats = _mark_uncalled(stats, "#flops", flops.uncalled_modules())
    if activations is not None:
        stats = _mark_uncalled(stats, "#acts", activations.uncalled_modules())
    header = ""
    if uncalled:
        header = (
            "N/A indicates a possibly missing statistic due to how the module was called. "
            "Missing values are still included in the parent's total.\n"
        )
    return header + _module_repr(model, "", stats)


def _indent(text: str, spaces: int) -> str:
    first, *rest = text.split("\n")
    return "\n".join([first, *((" " * spaces) + line for line in rest)])


def _module_repr(module: nn.Module, name: str, stats: Stats) -> str:
    # nn.Module.__repr__ with one more line of extra information: the statistics.
    extra = module.extra_repr().split("\n") if module.extra_repr() else []
    if name in stats:
        printed = ", ".join(f"{k}: {v}" for k, v in stats[name].items())
        extra += printed.split("\n") if printed else []
    children = []
    for key, child in module._modules.items():
        child_name = f"{name}.{key}" if name else key
        children.append(f"({key}): " + _indent(_module_repr(child, child_name, stats), 2))
    lines = extra + children
    text = module._get_name() + "("
    if lines:
        if len(extra) == 1 and not children:
            text += extra[0]
        else:
            text += "\n  " + "\n  ".join(lines) + "\n"
    return text + ")"


def _dummy_inputs(model: nn.Module, input_shape: Any) -> tuple[torch.Tensor, ...]:
    param = next(model.parameters(), None)
    device = param.device if param is not None else torch.device("cpu")

    def ints(shape: Any) -> bool:
        return isinstance(shape, tuple) and all(isinstance(s, int) for s in shape)

    if ints(input_shape):
        return (torch.randn(1, *input_shape, device=device),)
    if isinstance(input_shape, tuple) and input_shape and all(ints(s) for s in input_shape):
        return tuple(torch.randn(1, *s, device=device) for s in input_shape)
    raise ValueError(
        f"input_shape={input_shape!r}: give a tuple of ints (one input, without the batch "
        "dimension, e.g. (3, 224, 224)) or a tuple of such tuples (one per input)"
    )


def get_model_complexity_info(
    model: nn.Module,
    input_shape: tuple[int, ...] | tuple[tuple[int, ...], ...] | None = None,
    inputs: Any = None,
    show_table: bool = True,
    show_arch: bool = True,
) -> dict[str, Any]:
    """Flops, activations and parameters of ``model``, as numbers, strings and printouts.

    Give ``inputs`` (passed to the forward; a tuple is spread into its arguments) or
    ``input_shape``: a tuple of ints builds one random input of batch size 1, a tuple of such
    tuples one input per tuple.

    Returns:
        dict with ``flops``, ``flops_str``, ``activations``, ``activations_str``, ``params``,
        ``params_str``, ``out_table`` (the table, "" without show_table) and ``out_arch``
        (the model printout, "" without show_arch).

    Example:
        >>> import torch
        >>> info = get_model_complexity_info(torch.nn.Linear(10, 10), input_shape=(10,))
        >>> info['flops'], info['params_str'], info['activations']
        (100, '0.11K', 10)
    """
    if input_shape is None and inputs is None:
        raise ValueError('One of "input_shape" and "inputs" should be set.')
    if input_shape is not None and inputs is not None:
        raise ValueError('"input_shape" and "inputs" cannot be both set.')
    if inputs is None:
        inputs = _dummy_inputs(model, input_shape)
    flop_handler = FlopAnalyzer(model, inputs)
    # The flop analysis already warns of the operators it cannot count and the modules never
    # called; the same warnings from the activation analysis would only repeat them (or call
    # batch norm "unsupported" for having no activations).
    activation_handler = ActivationAnalyzer(model, inputs)
    activation_handler.unsupported_ops_warnings(False).uncalled_modules_warnings(False)
    flops = flop_handler.total()
    activations = activation_handler.total()
    params = parameter_count(model)[""]
    table = ""
    if show_table:
        table = "\n" + complexity_stats_table(
            flops=flop_handler, activations=activation_handler, show_param_shapes=True
        )
    arch = ""
    if show_arch:
        arch = "\n" + complexity_stats_str(flops=flop_handler, activations=activation_handler)
    return {
        "flops": flops,
        "flops_str": _format_size(flops),
        "activations": activations,
        "activations_str": _format_size(activations),
        "params": params,
        "params_str": _format_size(params),
        "out_table": table,
        "out_arch": arch,
    }
