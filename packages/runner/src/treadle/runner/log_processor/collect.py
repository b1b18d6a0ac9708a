"""Read the message hub's values of one mode (train, val or test) into plain numbers.

This is the one place where logged tensors become Python numbers: each ``HistoryBuffer`` reads
all its pending tensors in one batch when a statistic is asked of it, so the device is waited
for once per logging interval, never per step.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

    from treadle.logging import HistoryBuffer

    from .custom_cfg import Statistic


def strip_mode(key: str, mode: str) -> str:
    """``'train/loss'`` → ``'loss'`` for mode ``'train'``; other keys unchanged."""
    prefix = f"{mode}/"
    return key[len(prefix) :] if key.startswith(prefix) else key


def of_mode(values: dict[str, Any], mode: str, keep_prefix: bool) -> dict[str, Any]:
    """The entries of ``values`` whose key is ``'<mode>/...'``, in order.

    MMEngine matches keys that merely start with the mode's name ('validation_x' for 'val');
    here the separator is required, so only the mode's own keys are read.
    """
    prefix = f"{mode}/"
    return {
        (key if keep_prefix else key[len(prefix) :]): value
        for key, value in values.items()
        if key.startswith(prefix)
    }


def collect_scalars(
    scalars: dict[str, HistoryBuffer],
    mode: str,
    *,
    window_size: int,
    mean_pattern: re.Pattern[str],
    statistics: list[Statistic],
    epoch_length: int | None = None,
    global_length: int | None = None,
    keep_prefix: bool = False,
) -> dict[str, Any]:
    """``{name: number}`` for the scalars of ``mode``: a mean over ``window_size`` for names
    matching ``mean_pattern`` (losses, times), the latest value for the others, then the
    ``custom_cfg`` statistics (which replace or add names). ``epoch_length`` and
    ``global_length`` are what the statistics' ``'epoch'`` and ``'global'`` windows mean."""
    buffers = of_mode(scalars, mode, keep_prefix)
    tag: dict[str, Any] = {}
    for key, buffer in buffers.items():
        # The pattern is matched on the name without its mode, so 'train/lr' never matches
        # 'train'-something by accident.
        name = strip_mode(key, mode)
        tag[key] = buffer.mean(window_size) if mean_pattern.search(name) else buffer.current()
    for statistic in statistics:
        # Resolved first: a window that is no window fails at every line, as MMEngine's.
        kwargs = statistic.kwargs(epoch_length, global_length)
        source = f"{mode}/{statistic.data_src}" if keep_prefix else statistic.data_src
        buffer = buffers.get(source)
        if buffer is None:
            # A custom entry may name a scalar of one mode only (a train loss): fine elsewhere.
            continue
        name = f"{mode}/{statistic.log_name}" if keep_prefix else f"{statistic.log_name}"
        if statistic.method_name is None:
            raise TypeError(
                f"LogProcessor {statistic.origin} (data_src={statistic.data_src!r}) has no "
                f"method_name, so it names no statistic (MMEngine: statistics() missing 1 "
                f"required positional argument: 'method_name'); add method_name='mean' or "
                f"'max', 'min', 'current'"
            )
        try:
            tag[name] = buffer.statistics(statistic.method_name, **kwargs)
        except (KeyError, TypeError, ValueError) as error:
            # KeyError's str() quotes its message; the first argument is the text itself.
            detail = error.args[0] if len(error.args) == 1 else error
            kind = next(k for k in (KeyError, TypeError, ValueError) if isinstance(error, k))
            raise kind(
                f"LogProcessor {statistic.origin} (data_src={statistic.data_src!r}, "
                f"method_name={statistic.method_name!r}): {detail}"
            ) from error
    return tag


def collect_non_scalars(info: dict[str, Any], mode: str, keep_prefix: bool) -> dict[str, Any]:
    """The runtime information of ``mode`` (a confusion matrix, a per-class table...)."""
    return of_mode(info, mode, keep_prefix)
