"""ModelAnalysis: per-module statistics of one forward pass, from per-operator handles.

The base of FlopAnalyzer and ActivationAnalyzer (MMEngine's ``JitModelAnalysis``, whose name is
kept as an alias). The forward runs on the first request and again after the handles change.
"""

from __future__ import annotations

import copy
import difflib
import logging
import warnings
from collections import Counter
from dataclasses import dataclass
from numbers import Number
from typing import Any, TypeVar

import numpy as np
from torch import nn

from treadle.logging import print_log
from treadle.runner.analysis.handles import Handle
from treadle.runner.analysis.recorder import record_ops
from treadle.runner.analysis.values import OpValue

T = TypeVar("T", bound="ModelAnalysis")

# Operators that cost no flops: shapes, copies, integer and comparison operators (MMEngine's
# list), plus the Python-level spellings of the same things that treadle sees.
_IGNORED_OPS = {
    f"aten::{name}"
    for name in (  # noqa: SIM905 - one line per group reads better than 80 quoted names
        "Int ScalarImplicit __and__ arange bitwise_not cat chunk clamp clamp_ constant_pad_nd "
        "contiguous copy_ detach dropout empty eq expand flatten floor floor_divide full "
        "full_like gather ge gt index index_put_ masked_fill max narrow new_empty new_full "
        "new_zeros nonzero ones permute relu relu_ remainder reshape roll select size slice "
        "split split_with_sizes squeeze stack t to transpose type_as unbind unsqueeze unsqueeze_ "
        "view zeros zeros_like "
        # the Python-level spellings: indexing, properties, dtype and device conversions
        "getitem setitem get float double half bfloat16 int long bool cpu cuda type "
        "view_as expand_as reshape_as unflatten movedim"
    ).split()
}
_TRACER_WARNING_MODES = ("all", "no_tracer_warning", "none")
_ANCESTOR_MODES = ("owner", "caller")


@dataclass
class Statistics:
    """What one analysis found: counts and unsupported operators by module, uncalled modules."""

    counts: dict[str, Counter[str]]
    unsupported_ops: dict[str, Counter[str]]
    uncalled_mods: set[str]


def _named_modules_with_dup(model: nn.Module, prefix: str = "") -> list[tuple[str, nn.Module]]:
    # Like named_modules(), but a module reachable under two names is listed under both.
    out = [(prefix, model)]
    for name, child in model._modules.items():
        if child is not None:
            out += _named_modules_with_dup(child, prefix + ("." if prefix else "") + name)
    return out


def _simplify_op_name(kind: str) -> str:
    return kind.partition("::")[2] or kind


class ModelAnalysis:
    """Per-module statistics of a model's forward pass, computed by operator handles.

    ``set_op_handle(name, handle)`` says how to count an operator (``'aten::linear'``...);
    ``total``, ``by_operator``, ``by_module`` and ``by_module_and_operator`` report the counts.
    An operator belongs to the module whose ``__call__`` runs it and to that module's parents.

    Args:
        model: the model to analyse.
        inputs: its input: a tuple is spread into the forward's arguments, anything else
            (a tensor, a dict...) is its only argument.

    Example:
        >>> import torch
        >>> from treadle.runner.analysis.handles import linear_flop_jit
        >>> model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
        >>> analysis = ModelAnalysis(model, (torch.ones(1, 4),))
        >>> analysis.set_op_handle('aten::linear', linear_flop_jit).by_module()
        Counter({'': 18, '0': 12, '1': 6})
    """

    def __init__(self, model: nn.Module, inputs: Any) -> None:
        self._model = model
        self._inputs = inputs
        self._op_handles: dict[str, Handle] = {}
        self._named_modules = dict(_named_modules_with_dup(model))
        self._aliases = self._get_aliases(model)
        self._stats: Statistics | None = None
        self._ignored_ops: set[str] = set(_IGNORED_OPS)
        self.unsupported_ops_warnings(True)
        self.uncalled_modules_warnings(True)
        self.tracer_warnings("no_tracer_warning")
        self.ancestor_mode("owner")

    # ---- results -------------------------------------------------------------------------
    def total(self, module_name: str = "") -> int:
        """The statistic summed over all operators of ``module_name`` ("" is the model)."""
        stats = self._analyze()
        return sum(stats.counts[self.canonical_module_name(module_name)].values())

    def by_operator(self, module_name: str = "") -> Counter[str]:
        """The statistic of ``module_name`` by operator (names without ``aten::``)."""
        stats = self._analyze()
        return stats.counts[self.canonical_module_name(module_name)]

    def by_module_and_operator(self) -> dict[str, Counter[str]]:
        """The statistic of every module, by operator."""
        return self._analyze().counts

    def by_module(self) -> Counter[str]:
        """The statistic of every module, summed over its operators."""
        stats = self._analyze()
        return Counter({mod: sum(ops.values()) for mod, ops in stats.counts.items()})

    def unsupported_ops(self, module_name: str = "") -> Counter[str]:
        """How often each operator without a handle (and not ignored) ran in ``module_name``.

        Runs the analysis if it has not run yet (MMEngine raises RuntimeError then).
        """
        stats = self._analyze()
        return stats.unsupported_ops[self.canonical_module_name(module_name)]

    def uncalled_modules(self) -> set[str]:
        """Submodules whose ``__call__`` never ran (unused, or only reached by ``.forward()``);
        what they computed is counted in the module that called them."""
        return self._analyze().uncalled_mods

    # ---- settings ------------------------------------------------------------------------
    def set_op_handle(self: T, *args: Any, **kwargs: Handle | None) -> T:
        """Add or replace operator handles: ``(name, handle)`` pairs or ``name=handle``.

        A handle of None makes the operator ignored (counted as zero, never unsupported).

        Example:
            >>> import torch
            >>> a = ModelAnalysis(torch.nn.Linear(2, 2), (torch.ones(1, 2),))
            >>> a.set_op_handle('aten::linear', lambda i, o: 7).total()
            7
        """
        if len(args) % 2:
            raise TypeError(
                f"set_op_handle takes (name, handle) pairs, got an odd number of positional "
                f"arguments: {args!r}"
            )
        handles = dict(zip(args[::2], args[1::2], strict=True), **kwargs)
        for name, handle in handles.items():
            if not isinstance(name, str):
                raise TypeError(f"set_op_handle: operator names are str, got {name!r}")
            if handle is None:
                # MMEngine only marks it ignored and keeps counting with the old handle.
                self._op_handles.pop(name, None)
                self._ignored_ops.add(name)
            elif not callable(handle):
                raise TypeError(
                    f"set_op_handle: the handle of {name!r} must be callable "
                    f"(inputs, outputs) -> count, or None; got {type(handle).__name__}"
                )
            else:
                self._op_handles[name] = handle
        self._stats = None
        return self

    def clear_op_handles(self: T) -> T:
        """Remove every handle and every operator ignored by ``set_op_handle(name, None)``."""
        self._op_handles = {}
        self._ignored_ops = set(_IGNORED_OPS)
        self._stats = None
        return self

    def canonical_module_name(self, name: str) -> str:
        """The name statistics are reported under for ``name`` (a shared module has one)."""
        if not isinstance(name, str):
            raise TypeError(f"module names are str, got {type(name).__name__}: {name!r}")
        if name in self._aliases:
            return self._aliases[name]
        known = [n for n in self._aliases if isinstance(n, str)]
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; closest: {', '.join(repr(c) for c in close)}" if close else ""
        raise KeyError(
            f"{name!r} is not a submodule of the analysed {type(self._model).__name__}{hint}"
        )

    def copy(self: T, new_model: nn.Module | None = None, new_inputs: Any = None) -> T:
        """The same analysis (handles, ignored operators, modes) on another model or inputs."""
        new = copy.copy(self)
        model = self._model if new_model is None else new_model
        ModelAnalysis.__init__(new, model, self._inputs if new_inputs is None else new_inputs)
        new._op_handles = dict(self._op_handles)
        new._ignored_ops = set(self._ignored_ops)
        new._enable_warn_unsupported_ops = self._enable_warn_unsupported_ops
        new._enable_warn_uncalled_mods = self._enable_warn_uncalled_mods
        new._warn_trace = self._warn_trace
        new._ancestor_mode = self._ancestor_mode
        return new

    def tracer_warnings(self: T, mode: str) -> T:
        """Which Python warnings raised during the forward to show: 'all', 'no_tracer_warning'
        (all but jit's TracerWarning; the default) or 'none'."""
        if mode not in _TRACER_WARNING_MODES:
            raise ValueError(
                f"tracer_warnings: mode {mode!r} is not one of {_TRACER_WARNING_MODES}"
            )
        self._warn_trace = mode
        return self

    def ancestor_mode(self: T, mode: str) -> T:
        """Which modules an operator counts in: 'owner' (the module running it and that
        module's parents by name; the default) or 'caller' (every module executing)."""
        if mode not in _ANCESTOR_MODES:
            raise ValueError(f"ancestor_mode: mode {mode!r} is not one of {_ANCESTOR_MODES}")
        self._ancestor_mode = mode
        self._stats = None
        return self

    def unsupported_ops_warnings(self: T, enabled: bool) -> T:
        """Whether to log a warning for each operator that has no handle (default True)."""
        self._enable_warn_unsupported_ops = enabled
        return self

    def uncalled_modules_warnings(self: T, enabled: bool) -> T:
        """Whether to log a warning naming the submodules never called (default True)."""
        self._enable_warn_uncalled_mods = enabled
        return self

    # ---- the analysis --------------------------------------------------------------------
    def _get_aliases(self, model: nn.Module) -> dict[Any, str]:
        aliases: dict[Any, str] = {}
        first: dict[int, str] = {}
        for name, module in _named_modules_with_dup(model):
            first.setdefault(id(module), name)
            aliases[name] = first[id(module)]
        self._canonical_by_id = first
        return aliases

    def _ancestors(self, scopes: tuple[str, ...]) -> set[str]:
        if self._ancestor_mode == "caller":
            return {"", *scopes}
        parts = (scopes[-1] if scopes else "").split(".")
        return {""} | {".".join(parts[:k]) for k in range(1, len(parts) + 1) if parts[0]}

    def _analyze(self) -> Statistics:
        if self._stats is not None:
            return self._stats
        # In module order (a set's order would change the order of the table's rows).
        names = list(dict.fromkeys(self._aliases.values()))
        counts: dict[str, Counter[str]] = {name: Counter() for name in names}
        unsupported: dict[str, Counter[str]] = {name: Counter() for name in names}
        seen: set[str] = set()

        def on_op(kind: str, inputs: list[OpValue], outputs: list[OpValue], scopes: Any) -> None:
            ancestors = self._ancestors(scopes)
            handle = self._op_handles.get(kind)
            if handle is None:
                if kind not in self._ignored_ops:
                    for name in ancestors:
                        unsupported.setdefault(name, Counter())[kind] += 1
                return
            result = handle(inputs, outputs)
            if isinstance(result, Number) and not isinstance(result, bool):
                result = Counter({_simplify_op_name(kind): result})
            if not isinstance(result, Counter):
                raise ValueError(
                    f"the handle of {kind} returned {type(result).__name__}; handles return "
                    "a number or a Counter of numbers"
                )
            for value in result.values():
                if not isinstance(value, (int, float, np.integer, np.floating)):
                    raise ValueError(
                        f"the handle of {kind} counted a {type(value).__name__} ({value!r}); "
                        "counts must be Python or NumPy numbers (a tensor would sync the device)"
                    )
            for name in ancestors:
                counts.setdefault(name, Counter()).update(result)

        def on_call(name: str) -> None:
            seen.add(name)
            if self._ancestor_mode == "owner":
                seen.update(self._ancestors((name,)))

        with warnings.catch_warnings():
            if self._warn_trace == "none":
                warnings.simplefilter("ignore")
            names_by_id = dict(self._canonical_by_id)
            record_ops(self._model, self._inputs, names_by_id, on_op, on_call)
        # Counter.update keeps zeros; MMEngine's counters hold positive counts only.
        counts = {name: +ops for name, ops in counts.items()}
        stats = Statistics(counts, unsupported, set(names) - seen)
        self._stats = stats
        self._warn_unsupported_ops(unsupported[""])
        self._warn_uncalled_mods(stats.uncalled_mods)
        return stats

    def _warn_unsupported_ops(self, ops: Counter[str]) -> None:
        if not self._enable_warn_unsupported_ops:
            return
        for op, freq in ops.items():
            print_log(
                f"Unsupported operator {op} encountered {freq} time(s)", "current", logging.WARNING
            )

    def _warn_uncalled_mods(self, uncalled: set[str]) -> None:
        if not self._enable_warn_uncalled_mods:
            return
        uncalled = {name for name in uncalled if self._has_forward(name)}
        if not uncalled:
            return
        print_log(
            "The following submodules of the model were never called during the analysis: "
            "they are unused, or were run through .forward() or another method, in which case "
            "their statistics are counted in the module that called them.\n"
            + ", ".join(sorted(uncalled)),
            "current",
            logging.WARNING,
        )

    def _has_forward(self, name: str) -> bool:
        # Containers have no forward of their own: not being called is what they do.
        module = self._named_modules.get(name)
        if module is None:
            return False
        forward = type(module).forward
        return all(forward is not c.forward for c in (nn.ModuleList, nn.ModuleDict, nn.Module))


#: MMEngine's name for the base class.
JitModelAnalysis = ModelAnalysis
