"""``custom_cfg`` of the LogProcessor: extra statistics of logged scalars, checked up front.

Each entry reads one scalar (``data_src``, without its ``train/`` / ``val/`` prefix) and reports
a statistic of it (``method_name`` with its arguments) under ``log_name`` (``data_src`` itself
when absent, replacing the default statistic). ``window_size`` may be an int, ``'epoch'`` (the
iterations of the current epoch) or ``'global'`` (every iteration of the run).

MMEngine checks these entries with ``assert`` and discovers a bad ``window_size`` only at the first
logging step; here every mistake is a ``TypeError``/``ValueError`` naming the entry, raised when
the LogProcessor is built.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SYMBOLIC_WINDOWS = ("epoch", "global")


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
    method_name: str
    # int, 'epoch', 'global', or None (the statistic gets no window_size argument at all).
    window_size: int | str | None = None
    # Any further keyword arguments of the statistic, passed through as MMEngine does.
    extra: dict[str, Any] = field(default_factory=dict)
    # Where the entry came from, for error messages: "custom_cfg[2]".
    origin: str = "custom_cfg"

    def window(self, epoch_length: int, global_length: int) -> int | str | None:
        """The window as an int, given how many iterations 'epoch' and 'global' mean now."""
        if self.window_size == "epoch":
            return epoch_length
        if self.window_size == "global":
            return global_length
        return self.window_size

    def kwargs(self, epoch_length: int, global_length: int) -> dict[str, Any]:
        """The keyword arguments of ``HistoryBuffer.statistics`` besides ``method_name``."""
        kwargs = dict(self.extra)
        if self.window_size is not None:
            kwargs["window_size"] = self.window(epoch_length, global_length)
        return kwargs


def _check_window(origin: str, window_size: Any, by_epoch: bool) -> None:
    if window_size is None:
        return
    if isinstance(window_size, bool) or not isinstance(window_size, (int, str)):
        raise TypeError(
            f"LogProcessor {origin}: window_size must be an int, 'epoch' or 'global', got "
            f"{type(window_size).__name__}: {window_size!r}"
        )
    if isinstance(window_size, int) and window_size < 1:
        raise ValueError(
            f"LogProcessor {origin}: window_size must be at least 1, got {window_size}"
        )
    if isinstance(window_size, str) and window_size not in SYMBOLIC_WINDOWS:
        raise ValueError(
            f"LogProcessor {origin}: window_size must be an int, 'epoch' or 'global', got "
            f"{window_size!r}"
        )
    if window_size == "epoch" and not by_epoch:
        raise ValueError(
            f"LogProcessor {origin}: window_size='epoch' needs by_epoch=True; with "
            f"by_epoch=False there are no epochs to average over (use an int or 'global')"
        )


def _check_entry(index: int, entry: Any, by_epoch: bool) -> Statistic:
    origin = f"custom_cfg[{index}]"
    if not isinstance(entry, dict):
        raise TypeError(
            f"LogProcessor {origin} must be a dict such as dict(data_src='loss', "
            f"method_name='mean', window_size=100), got {type(entry).__name__}: {entry!r}"
        )
    entry = dict(entry)
    for key in ("data_src", "method_name"):
        if key not in entry:
            raise ValueError(
                f"LogProcessor {origin} has no {key!r}: it holds {sorted(entry)}; an entry "
                f"looks like dict(data_src='loss', method_name='mean', window_size=100)"
            )
        if not isinstance(entry[key], str):
            raise TypeError(
                f"LogProcessor {origin}: {key} must be a str, got "
                f"{type(entry[key]).__name__}: {entry[key]!r}"
            )
    data_src = entry.pop("data_src")
    log_name = entry.pop("log_name", data_src)
    if not isinstance(log_name, str):
        raise TypeError(
            f"LogProcessor {origin}: log_name must be a str, got "
            f"{type(log_name).__name__}: {log_name!r}"
        )
    method_name = entry.pop("method_name")
    window_size = entry.pop("window_size", None)
    _check_window(origin, window_size, by_epoch)
    return Statistic(data_src, log_name, method_name, window_size, entry, origin)


def parse_custom_cfg(custom_cfg: Any, by_epoch: bool) -> list[Statistic]:
    """Check ``custom_cfg`` (a list of dicts, or None) and return its entries.

    Example:
        >>> [s.log_name for s in parse_custom_cfg(
        ...     [dict(data_src='loss', log_name='loss_all', method_name='mean')], by_epoch=True)]
        ['loss_all']
    """
    if not custom_cfg:
        return []
    if isinstance(custom_cfg, dict) or not isinstance(custom_cfg, (list, tuple)):
        raise TypeError(
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
            raise ValueError(
                f"LogProcessor {statistic.origin} writes {statistic.log_name!r}, which "
                f"{earlier.origin} already writes: give one of them another log_name (an entry "
                f"without log_name replaces its data_src's default statistic)"
            )
        seen[statistic.log_name] = statistic
    return statistics
