"""Run a model once and report every torch operator it calls, with the modules calling it.

No jit trace: the model's own forward runs under a ``TorchFunctionMode``, and forward hooks on
every submodule keep the stack of module names that are executing. So models with dict or
list inputs, data-dependent control flow or keyword-only arguments are analysed as they run.
The recording leaves the model as it found it: buffers a training-mode forward updates
(batch-norm running statistics) are restored afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from treadle.runner.analysis.op_table import READERS, op_kind
from treadle.runner.analysis.values import OpValue

#: Called for each operator: (kind, inputs, outputs, names of the modules executing, outermost
#: first). ``kind`` is the aten-style name (``aten::linear``).
OpCallback = Callable[[str, list[OpValue], list[OpValue], tuple[str, ...]], None]


def _makes_tensor(result: Any) -> bool:
    if isinstance(result, torch.Tensor):
        return True
    if isinstance(result, (tuple, list)):
        return any(isinstance(r, torch.Tensor) for r in result)
    return False


class _OpRecorder(TorchFunctionMode):
    def __init__(self, on_op: OpCallback, scopes: list[str]) -> None:
        super().__init__()
        self._on_op = on_op
        self._scopes = scopes

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        # The mode is switched off while func runs: the functions it calls internally are
        # part of this operator and are not recorded again.
        result = func(*args, **kwargs)
        reader = READERS.get(func)
        ops = None
        if reader is not None:
            try:
                ops = reader(args, kwargs, result)
            except (TypeError, ValueError, AttributeError, IndexError):
                # A call whose arguments the reader does not understand (a newer signature):
                # reported as unsupported under its own name rather than failing the forward.
                ops = None
        if ops is not None:
            for kind, inputs, outputs in ops:
                self._on_op(kind, inputs, outputs, tuple(self._scopes))
        elif _makes_tensor(result):
            inputs = [OpValue(v) for v in (*args, *kwargs.values())]
            self._on_op(op_kind(func), inputs, [OpValue(result)], tuple(self._scopes))
        return result


def _unwrap(model: nn.Module) -> nn.Module:
    # (Distributed)DataParallel only forwards to the module it wraps: analyse that module,
    # under the wrapper's name, without the wrapper's scatter or gradient hooks.
    while isinstance(model, (nn.DataParallel, nn.parallel.DistributedDataParallel)):
        model = model.module
    return model


@contextmanager
def _scope_hooks(
    model: nn.Module, names: dict[int, str], scopes: list[str], on_call: Callable[[str], None]
) -> Iterator[None]:
    handles = []
    done: set[int] = set()

    def push(name: str) -> Callable[..., None]:
        def pre_hook(module: nn.Module, inputs: Any) -> None:
            scopes.append(name)
            on_call(name)

        return pre_hook

    def pop(module: nn.Module, inputs: Any, outputs: Any) -> None:
        scopes.pop()

    for module in [model, *model.modules()]:
        if id(module) in done:
            continue
        done.add(id(module))
        name = names.get(id(module), "")
        handles.append(module.register_forward_pre_hook(push(name)))
        # always_call: the stack stays right even when a forward raises.
        handles.append(module.register_forward_hook(pop, always_call=True))
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


@contextmanager
def _buffers_restored(model: nn.Module) -> Iterator[None]:
    saved = [(b, b.detach().clone()) for b in model.buffers()]
    try:
        yield
    finally:
        with torch.no_grad():
            for buffer, value in saved:
                buffer.copy_(value)


def record_ops(
    model: nn.Module,
    inputs: Any,
    names: dict[int, str],
    on_op: OpCallback,
    on_call: Callable[[str], None] | None = None,
) -> None:
    """Call ``model`` on ``inputs`` (a tuple is spread into arguments, anything else is the one
    argument) and report each operator to ``on_op``. ``names`` maps ``id(module)`` to the
    canonical name of each submodule (the root's name too, usually ""); ``on_call`` receives
    the name of each module whose ``__call__`` starts.

    Example:
        >>> import torch
        >>> seen = []
        >>> model = torch.nn.Linear(3, 2)
        >>> record_ops(model, (torch.ones(1, 3),), {id(model): ''},
        ...            lambda kind, i, o, scopes: seen.append((kind, scopes)))
        >>> seen
        [('aten::linear', ('',))]
    """
    root_name = names.get(id(model), "")
    inner = _unwrap(model)
    names = {**names, id(inner): root_name}
    scopes: list[str] = []
    args = inputs if isinstance(inputs, tuple) else (inputs,)
    # The fast paths of nn.MultiheadAttention and nn.TransformerEncoderLayer run one fused
    # kernel: switching them off makes the model run the operators that are counted.
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with (
            _buffers_restored(inner),
            _scope_hooks(inner, names, scopes, on_call or (lambda name: None)),
            _OpRecorder(on_op, scopes),
        ):
            inner(*args)
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
