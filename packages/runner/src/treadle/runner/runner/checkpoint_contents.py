"""The parts of a runner checkpoint that need converting to load with ``weights_only=True``.

``torch.load(weights_only=True)`` builds tensors, numbers, strings and plain containers only.
The message hub holds HistoryBuffers (deques inside) and whatever hooks put in its runtime
info; a checkpoint stores them as plain data:

- each HistoryBuffer becomes ``{'__history_buffer__': True, 'log_history': [...],
  'count_history': [...], 'max_length': n, 'dtypes': [...]}`` and comes back as a HistoryBuffer
  on resume;
- numpy scalars become Python numbers, dict subclasses (ConfigDict...) plain dicts;
- numpy arrays stay (resuming allows them);
- anything else that torch would refuse is kept as it is, with one warning naming where it is.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from collections.abc import Mapping
from typing import Any

import torch

from treadle.logging import HistoryBuffer, print_log
from treadle.runner.checkpoint import tensors_to_cpu

BUFFER_MARK = "__history_buffer__"
_PLAIN_SCALARS = (str, int, float, bool, complex, bytes, type(None))
_TORCH_VALUES = (torch.Tensor, torch.dtype, torch.device, torch.Size)


def _same_mapping(original: Mapping, items: dict) -> dict:
    """``items`` as an OrderedDict or Counter when ``original`` was one, else a dict."""
    if type(original) in (OrderedDict, Counter):
        return type(original)(items)
    return items


def history_buffer_to_plain(buffer: HistoryBuffer) -> dict[str, Any]:
    values, counts = buffer.data
    return {
        BUFFER_MARK: True,
        "log_history": values,
        "count_history": counts,
        "max_length": buffer.max_length,
        # int64 or float64 (MMEngine's arrays): how the mean sums, kept through a resume.
        "dtypes": list(buffer.dtypes),
    }


def plain_to_history_buffer(state: Mapping[str, Any]) -> HistoryBuffer:
    # Checkpoints written before "dtypes" existed hold the message hub's buffers: float64.
    dtypes = tuple(state.get("dtypes", ("float64", "float64")))
    return HistoryBuffer.from_history(
        state["log_history"], state["count_history"], state["max_length"], dtypes
    )


def is_plain_history_buffer(value: Any) -> bool:
    return isinstance(value, Mapping) and value.get(BUFFER_MARK) is True


class _Sanitizer:
    """Turns values into what weights_only loading builds; warns once per unknown type."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.unknown: dict[str, str] = {}

    def __call__(self, value: Any, path: str) -> Any:
        # Exact types: numpy.float64 is a float subclass that pickles as a numpy scalar.
        if type(value) in _PLAIN_SCALARS or isinstance(value, _TORCH_VALUES):
            return value
        if isinstance(value, HistoryBuffer):
            return history_buffer_to_plain(value)
        if isinstance(value, Mapping):
            items = {key: self(item, f"{path}[{key!r}]") for key, item in value.items()}
            return _same_mapping(value, items)
        if isinstance(value, (list, tuple, set, frozenset)) and not hasattr(value, "_fields"):
            return type(value)(self(item, f"{path}[{i}]") for i, item in enumerate(value))
        if type(value).__module__ == "numpy":
            if not getattr(value, "shape", None) and hasattr(value, "item"):
                # numpy scalars (np.float64 eta, best scores): the same number as Python's.
                return value.item()
            if type(value).__name__ == "ndarray" and not value.dtype.hasobject:
                # Resuming reads numpy arrays (see mmengine_migration.mmengine_safe_globals).
                return value
        self.unknown.setdefault(path, f"{type(value).__module__}.{type(value).__qualname__}")
        return value

    def warn(self) -> None:
        if not self.unknown:
            return
        found = ", ".join(f"{path} ({kind})" for path, kind in self.unknown.items())
        print_log(
            f"the checkpoint's {self.where} holds objects that torch.load(weights_only=True) "
            f"refuses: {found}. The checkpoint is written with them, but resuming from it needs "
            "these classes allowed with torch.serialization.add_safe_globals([...]).",
            logger="current",
            level=logging.WARNING,
        )


def sanitize(value: Any, where: str) -> Any:
    """``value`` made loadable with ``weights_only=True`` where it can be (see the module)."""
    sanitizer = _Sanitizer(where)
    result = sanitizer(value, where)
    sanitizer.warn()
    return result


def restore_history_buffers(value: Any) -> Any:
    """The inverse of :func:`sanitize` for HistoryBuffers: plain buffers become objects again."""
    if is_plain_history_buffer(value):
        return plain_to_history_buffer(value)
    if isinstance(value, Mapping):
        return _same_mapping(
            value, {key: restore_history_buffers(item) for key, item in value.items()}
        )
    return value


def message_hub_state(message_hub: Any) -> dict[str, Any]:
    """The message hub's ``state_dict()`` as plain data on the CPU."""
    return sanitize(tensors_to_cpu(message_hub.state_dict()), "message_hub")


def load_message_hub_state(message_hub: Any, state: Mapping[str, Any]) -> None:
    """Load a state written by :func:`message_hub_state`, or MMEngine's (already migrated)."""
    state = dict(state)
    state["log_scalars"] = {
        key: plain_to_history_buffer(value) if is_plain_history_buffer(value) else value
        for key, value in state.get("log_scalars", {}).items()
    }
    state.setdefault("runtime_info", {})
    state.setdefault("resumed_keys", {})
    message_hub.load_state_dict(
        {key: dict(value) for key, value in state.items() if isinstance(value, Mapping)}
    )
