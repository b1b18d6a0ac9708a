"""Reading checkpoints written by MMEngine 0.10 without MMEngine and without unrestricted pickle.

A full MMEngine checkpoint pickles ``mmengine.logging.history_buffer.HistoryBuffer`` objects
(numpy arrays inside, and bound methods of the class fetched with ``getattr``), numpy scalars
in the message hub, and sometimes ``mmengine.config.config.ConfigDict`` values. ``torch.load``
with ``weights_only=True`` refuses all of them. :func:`mmengine_safe_globals` allows exactly
these names for the time of one load, each mapped to a stand-in defined here (torch >= 2.5
accepts ``(object, "module.name")`` aliases), so nothing from MMEngine is imported or run;
:func:`migrate_mmengine_checkpoint` then turns the stand-ins into treadle's objects.
"""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

from treadle.config import ConfigDict
from treadle.logging import HistoryBuffer

_MMENGINE_HISTORY_BUFFER = "mmengine.logging.history_buffer.HistoryBuffer"
_MMENGINE_CONFIG_DICT = "mmengine.config.config.ConfigDict"


class LegacyHistoryBuffer:
    """What an MMEngine HistoryBuffer unpickles into: its attributes, nothing run.

    MMEngine stores ``max_length``, ``_log_history`` and ``_count_history`` (numpy arrays) and
    ``_statistics_methods``; :meth:`to_history_buffer` makes treadle's buffer of the same values.

    Example:
        >>> legacy = LegacyHistoryBuffer()
        >>> legacy.__dict__.update(_log_history=np.array([1.0, 3.0]),
        ...                        _count_history=np.array([1, 1]), max_length=10)
        >>> legacy.to_history_buffer().mean()
        2.0
    """

    def to_history_buffer(self) -> HistoryBuffer:
        state = self.__dict__
        log_history = np.asarray(state.get("_log_history", ()))
        count_history = np.asarray(state.get("_count_history", ()))
        # The arrays' dtypes decide how the mean sums (int64 or float64): kept as they were.
        dtypes = tuple(
            "int64" if a.dtype.kind in "iub" else "float64" for a in (log_history, count_history)
        )
        values = [v if dtypes[0] == "int64" else float(v) for v in log_history.tolist()]
        counts = [_number(c) for c in count_history.tolist()]
        max_length = int(state.get("max_length", max(len(values), 1)))
        return HistoryBuffer.from_history(
            values[-max_length:], counts[-max_length:], max_length, dtypes
        )


def _number(value: Any) -> int | float:
    return int(value) if float(value).is_integer() else float(value)


class _MethodName(str):
    """A method of a stand-in class named in the pickle (MMEngine pickles HistoryBuffer's
    registered statistics as ``getattr(HistoryBuffer, 'mean')``); kept as its name only."""


def _restricted_getattr(owner: Any, name: str) -> _MethodName:
    # builtins.getattr cannot be allowed as such: it would reach any attribute of any allowed
    # object. The pickles we read only ask for methods of the stand-ins.
    if owner is LegacyHistoryBuffer and isinstance(name, str) and not name.startswith("_"):
        return _MethodName(name)
    raise pickle.UnpicklingError(
        f"the checkpoint asks for getattr({owner!r}, {name!r}), which treadle does not allow "
        "while reading an MMEngine checkpoint"
    )


def _config_dict(*args: Any) -> ConfigDict:
    # MMEngine's ConfigDict pickles as ConfigDict({...}).
    return ConfigDict(*args)


# numpy 2 moved the pickling helpers from numpy.core to numpy._core.
_MULTIARRAY = np._core.multiarray if hasattr(np, "_core") else np.core.multiarray


def _numpy_scalar(dtype: np.dtype, *args: Any) -> Any:
    if dtype.hasobject:
        raise pickle.UnpicklingError("a numpy object scalar in a checkpoint is not allowed")
    return _MULTIARRAY.scalar(dtype, *args)


def _numpy_reconstruct(*args: Any) -> np.ndarray:
    return _MULTIARRAY._reconstruct(*args)


def _safe_globals() -> list[tuple[Any, str]]:
    aliases: list[tuple[Any, str]] = [
        (LegacyHistoryBuffer, _MMENGINE_HISTORY_BUFFER),
        (_config_dict, _MMENGINE_CONFIG_DICT),
        (_restricted_getattr, "builtins.getattr"),
        (np.ndarray, "numpy.ndarray"),
        (np.dtype, "numpy.dtype"),
    ]
    # numpy 2 pickles under numpy._core, numpy 1 under numpy.core.
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):
        aliases.append((_numpy_reconstruct, f"{module}._reconstruct"))
        aliases.append((_numpy_scalar, f"{module}.scalar"))
    # numpy 1.25+ pickles some dtypes as their class (numpy.dtypes.Float64DType).
    dtypes = getattr(np, "dtypes", None)
    if dtypes is not None:
        for name in dir(dtypes):
            if name.endswith("DType") and name != "ObjectDType":
                aliases.append((getattr(dtypes, name), f"numpy.dtypes.{name}"))
    return aliases


@contextlib.contextmanager
def mmengine_safe_globals() -> Iterator[None]:
    """Inside the block, ``torch.load(..., weights_only=True)`` reads MMEngine checkpoints:
    MMEngine's HistoryBuffer and ConfigDict and numpy arrays and scalars are allowed, each
    mapped to a stand-in; nothing else is.

    Example:
        >>> with mmengine_safe_globals():
        ...     checkpoint = torch.load('mmengine_epoch_3.pth', weights_only=True)
        >>> checkpoint = migrate_mmengine_checkpoint(checkpoint)
    """
    safe_globals = getattr(torch.serialization, "safe_globals", None)
    if safe_globals is None:
        # torch < 2.5 has no aliased safe globals: treadle's own checkpoints still load, an
        # MMEngine one is refused with the names of the classes it holds.
        yield
        return
    with safe_globals(_safe_globals()):
        yield


def migrate_mmengine_checkpoint(checkpoint: Any) -> Any:
    """``checkpoint`` with every stand-in replaced by treadle's object (LegacyHistoryBuffer by
    treadle's HistoryBuffer); a checkpoint without them comes back unchanged."""
    return _migrate(checkpoint)


def _migrate(value: Any) -> Any:
    if isinstance(value, LegacyHistoryBuffer):
        return value.to_history_buffer()
    if isinstance(value, dict):
        changed = {key: _migrate(item) for key, item in value.items()}
        if any(changed[key] is not item for key, item in value.items()):
            new = type(value)() if type(value) is not ConfigDict else ConfigDict()
            new.update(changed)
            return new
        return value
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        items = [_migrate(item) for item in value]
        if any(new is not old for new, old in zip(items, value, strict=True)):
            return type(value)(items)
    return value
