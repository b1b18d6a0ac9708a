"""``custom_cfg`` of the LogProcessor: extra statistics of logged scalars, checked up front.

Each entry reads one scalar (``data_src``, without its ``train/`` / ``val/`` prefix) and reports
a statistic of it (``method_name`` with its arguments) under ``log_name`` (``data_src`` itself
when absent, replacing the default statistic). ``window_size`` may be an int, ``'epoch'`` (the
iterations of the current epoch) or ``'global'`` (every iteration of the run).

What MMEngine refuses when built (an entry without ``data_src``, two entries writing one name,
``window_size='epoch'`` with ``by_epoch=False``) treadle refuses too, with a message naming the
entry, as a class that is also the one MMEngine raises (``errors.py``). What MMEngine builds,
treadle builds, and warns of where it is suspicious: an entry without ``method_name``, or whose
``method_name`` or ``window_size`` is no statistic or window, fails at a log line as in MMEngine
(with MMEngine's exception type); a ``data_src`` that is not a str matches no scalar; a
``log_name`` that is not a str is written as ``str(log_name)``; a window of 0 or below slices as
MMEngine's ``history[-window_size:]``.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from .errors import CustomCfgError, CustomCfgTypeError, WindowSizeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

SYMBOLIC_WINDOWS = ("epoch", "global")
_EXAMPLE = "dict(data_src='loss', method_name='mean', window_size=100)"


@dataclass(frozen=True)
class Statistic:
    """One checked ``custom_cfg`` entry.

    Example:
        >>> Statistic(data_src='loss', log_name='loss_epoch', method_name='mean',
        ...           window_size='epoch').window_size
        'epoch'
    """

    data_src: str
    log_name: str
    # None: the entry has no method_name; computing it raises MMEngine's TypeError.
    method_name: str | None
    # int, 'epoch', 'global', or None (the statistic gets no window_size argument at all).
    window_size: int | str | None = None
    # Any further keyword arguments of the statistic, passed through as MMEngine does.
    extra: dict[str, Any] = field(default_factory=dict)
    # Where the entry came from, for error messages: "custom_cfg[2]".
    origin: str = "custom_cfg"
    # What is suspicious about the entry, warned of when the LogProcessor is built.
    notes: tuple[str, ...] = field(default=(), compare=False)

    def window(self, epoch_length: int | None, global_length: int | None) -> Any:
        """The window as an int, given how many iterations 'epoch' and 'global' mean now
        (MMEngine's TypeError for a window that is none of those, at every line as there)."""
        if self.window_size == "epoch":
            return epoch_length
        if self.window_size == "global":
            return global_length
        if isinstance(self.window_size, str) or not isinstance(self.window_size, (int, type(None))):
            raise bad_window(self.origin, self.window_size)
        return self.window_size

    def kwargs(self, epoch_length: int | None, global_length: int | None) -> dict[str, Any]:
        """The keyword arguments of ``HistoryBuffer.statistics`` besides ``method_name``."""
        kwargs = dict(self.extra)
        if self.window_size is not None:
            kwargs["window_size"] = self.window(epoch_length, global_length)
        return kwargs


def bad_window(origin: str, window_size: Any) -> WindowSizeError:
    """The error of a window that is neither an int, 'epoch' nor 'global' (MMEngine's phrase
    first: its TypeError says "window_size should be int, epoch or global")."""
    return WindowSizeError(
        f"LogProcessor {origin}: window_size should be int, epoch or global (an int, 'epoch' "
        f"or 'global'), got {type(window_size).__name__}: {window_size!r}"
    )


def _window_notes(origin: str, window_size: Any, by_epoch: bool) -> list[str]:
    """Refuse what MMEngine refuses when built; describe what it builds but is suspicious."""
    if isinstance(window_size, str) and window_size in SYMBOLIC_WINDOWS:
        if window_size == "epoch" and not by_epoch:
            raise CustomCfgError(
                f"LogProcessor {origin}: window_size cannot be epoch when by_epoch=False: "
                f"there are no epochs to average over (use an int or 'global')"
            )
        return []
    if window_size is True:
        return ["window_size=True is read as the int 1; pass an int"]
    if window_size is False:
        return [f"window_size=False is read as the int 0: {window_below_one(0)}"]
    if window_size is None or (isinstance(window_size, int) and window_size >= 1):
        return []
    if isinstance(window_size, int):
        return [window_below_one(window_size)]
    return [
        f"window_size={window_size!r} is none of an int, 'epoch' or 'global': every log line "
        f"will fail with a TypeError, as in MMEngine (window_size should be int, epoch or "
        f"global)"
    ]


def window_below_one(window_size: int) -> str:
    """What a window of 0 or below means (MMEngine's numpy slice ``[-window_size:]``)."""
    if window_size == 0:
        return "window_size=0 means the whole history (MMEngine's numpy slice [-0:]); pass None"
    return (
        f"window_size={window_size} means every value but the first {-window_size} "
        f"(MMEngine's numpy slice [{-window_size}:]), not the last ones; pass a positive int"
    )


def _check_entry(index: int, entry: Any, by_epoch: bool) -> Statistic:
    origin = f"custom_cfg[{index}]"
    # Any mapping, by type or by protocol (a Config), as MMEngine reads entries with [] and get.
    if not isinstance(entry, Mapping) and not (
        hasattr(entry, "keys") and hasattr(entry, "__getitem__")
    ):
        raise CustomCfgTypeError(
            f"LogProcessor {origin} must be a dict such as {_EXAMPLE}, got "
            f"{type(entry).__name__}: {entry!r}"
        )
    entry = dict(entry)
    if "data_src" not in entry:
        raise CustomCfgError(
            f"LogProcessor {origin} has no 'data_src': it holds {sorted(entry)}; an entry "
            f"looks like {_EXAMPLE}"
        )
    notes = []
    data_src = entry.pop("data_src")
    if not isinstance(data_src, str):
        notes.append(
            f"data_src={data_src!r} is not a str: it names no logged scalar, so the entry adds "
            f"nothing to the line"
        )
    named = "log_name" in entry
    log_name = entry.pop("log_name", data_src)
    try:
        hash(log_name)  # MMEngine keeps the names in a set
    except TypeError as error:
        raise CustomCfgTypeError(
            f"LogProcessor {origin}: log_name {log_name!r} cannot name a value ({error}); "
            f"a name is a str"
        ) from None
    if named and not isinstance(log_name, str):
        notes.append(f"log_name={log_name!r} is not a str: the line names it {str(log_name)!r}")
    method_name = entry.pop("method_name", None)
    if method_name is not None and not isinstance(method_name, str):
        notes.append(
            f"method_name={method_name!r} is not a str, so it names no statistic: a log line "
            f"that has {data_src!r} will fail with a KeyError, as in MMEngine"
        )
    window_size = entry.pop("window_size", None)
    notes.extend(_window_notes(origin, window_size, by_epoch))
    return Statistic(
        data_src, log_name, method_name, window_size, entry, origin, notes=tuple(notes)
    )


def warn_suspicious(statistics: list[Statistic], stacklevel: int) -> None:
    """Warn of what is suspicious in each entry (``stacklevel`` counts from the caller): no
    ``method_name``, and the notes made when it was checked."""
    for statistic in statistics:
        notes = [f": {note}" for note in statistic.notes]
        if statistic.method_name is None:
            notes.insert(
                0,
                f" has no 'method_name': a log line that has {statistic.data_src!r} will fail "
                f"with a TypeError, as in MMEngine",
            )
        for note in notes:
            warnings.warn(
                f"LogProcessor {statistic.origin}{note}; an entry looks like {_EXAMPLE}",
                UserWarning,
                stacklevel=stacklevel + 1,
            )


def parse_custom_cfg(custom_cfg: Any, by_epoch: bool) -> list[Statistic]:
    """Check ``custom_cfg`` (a list of dicts, or None) and return its entries.

    Example:
        >>> [s.log_name for s in parse_custom_cfg(
        ...     [dict(data_src='loss', log_name='loss_all', method_name='mean')], by_epoch=True)]
        ['loss_all']
    """
    if not custom_cfg:
        return []
    if isinstance(custom_cfg, Mapping) or not isinstance(custom_cfg, (list, tuple)):
        raise CustomCfgTypeError(
            f"LogProcessor custom_cfg must be a list of dicts, got "
            f"{type(custom_cfg).__name__}: {custom_cfg!r}"
        )
    statistics = [_check_entry(i, entry, by_epoch) for i, entry in enumerate(custom_cfg)]
    # One output name, one statistic: two entries writing the same name would silently let the
    # later one win.
    seen: dict[str, Statistic] = {}
    for statistic in statistics:
        earlier = seen.get(statistic.log_name)
        if earlier is not None:
            raise CustomCfgError(
                f"LogProcessor {statistic.origin} writes {statistic.log_name!r}, which "
                f"{earlier.origin} already writes (found duplicate {statistic.log_name!r}): give "
                f"one of them another log_name (an entry without log_name replaces its "
                f"data_src's default statistic)"
            )
        seen[statistic.log_name] = statistic
    return statistics


def resolve_windows(
    custom_cfg: list[dict], epoch_length: int, global_length: Callable[[], int]
) -> list[dict[str, Any]]:
    """A deep copy of ``custom_cfg`` whose ``'epoch'`` and ``'global'`` windows are ints
    (``global_length()`` is asked only for a ``'global'`` window).

    Example:
        >>> resolve_windows([dict(data_src='loss', window_size='epoch')], 4, lambda: 30)
        [{'data_src': 'loss', 'window_size': 4}]
    """
    resolved = copy.deepcopy(list(custom_cfg))
    for index, entry in enumerate(resolved):
        window_size = entry.get("window_size")
        if window_size is None or isinstance(window_size, int):
            continue
        if window_size == "epoch":
            entry["window_size"] = epoch_length
        elif window_size == "global":
            entry["window_size"] = global_length()
        else:
            raise bad_window(f"custom_cfg[{index}]", window_size)
    return resolved


def statistics_of(resolved: list[dict]) -> list[Statistic]:
    """The statistics of a ``custom_cfg`` whose windows are resolved (what
    ``LogProcessor._parse_windows_size`` returns), unchecked otherwise, as MMEngine takes it.

    Example:
        >>> statistics_of([dict(data_src='loss', method_name='max', window_size=4)])[0].window_size
        4
    """
    statistics = []
    for index, entry in enumerate(resolved):
        origin = f"custom_cfg[{index}]"
        entry = dict(entry)
        data_src = entry.pop("data_src")
        window_size = entry.pop("window_size", None)
        if isinstance(window_size, str):
            # MMEngine fails here too: its HistoryBuffer slices with the string.
            raise WindowSizeError(
                f"LogProcessor {origin}: window_size {window_size!r} is not resolved: pass "
                f"custom_cfg through _parse_windows_size(runner, batch_idx, custom_cfg) first"
            )
        log_name = entry.pop("log_name", data_src)
        method_name = entry.pop("method_name", None)
        statistics.append(Statistic(data_src, log_name, method_name, window_size, entry, origin))
    return statistics
