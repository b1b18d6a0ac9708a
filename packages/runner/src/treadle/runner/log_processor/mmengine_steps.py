"""The steps of MMEngine's log line, as methods with MMEngine's names and signatures.

MMEngine's ``LogProcessor`` builds its line from private methods (``_collect_scalars``,
``_parse_windows_size``, ``_get_cur_loop``...), and toolboxes override them in subclasses, or
replace them on an instance in their tests. treadle's line goes through each of them: the cheap
ones always, and the three whose MMEngine form costs more than treadle's path
(``_collect_scalars`` and ``_parse_windows_size``, which copy ``custom_cfg`` dicts at every
line, and ``_get_max_memory``) only when they are replaced, which ``replaced()`` tells.
"""

from __future__ import annotations

import copy
import re

from .collect import collect_non_scalars, collect_scalars
from .custom_cfg import parse_custom_cfg, resolve_windows, statistics_of
from .runner_view import has_train_loop, mmengine_max_memory_mib

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .custom_cfg import Statistic


class MMEngineSteps:
    """MMEngine's private LogProcessor methods, which toolbox subclasses override and call.

    The LogProcessor mixes it in; its attributes (``by_epoch``, ``window_size``,
    ``mean_pattern``, ``log_with_hierarchy``, ``custom_cfg``) are the processor's.

    Example:
        >>> from treadle.runner.log_processor import LogProcessor
        >>> LogProcessor()._parse_windows_size(None, 4, [dict(data_src='loss',
        ...                                                    window_size='epoch')])
        [{'data_src': 'loss', 'window_size': 5}]
    """

    by_epoch: bool
    window_size: int
    mean_pattern: re.Pattern[str]
    log_with_hierarchy: bool
    custom_cfg: list[dict]
    _statistics: list[Statistic]
    _mean_window: Any

    def _check_custom_cfg(self) -> None:
        """Check ``self.custom_cfg`` and keep its parsed entries for the log line (the
        LogProcessor calls it when built, and when ``custom_cfg`` is assigned)."""
        self._statistics = parse_custom_cfg(self.custom_cfg, self.by_epoch)

    def _parse_windows_size(
        self, runner: Any, batch_idx: int, custom_cfg: list[dict] | None = None
    ) -> list[dict]:
        """A copy of ``custom_cfg`` (``self.custom_cfg`` by default) whose ``window_size``
        ``'epoch'`` is ``batch_idx + 1`` and ``'global'`` is ``runner.iter + 1``; an int or a
        missing window stays. Anything else is a TypeError."""
        entries = self.custom_cfg if custom_cfg is None else custom_cfg
        if not entries:
            return []
        return resolve_windows(entries, batch_idx + 1, lambda: runner.iter + 1)

    def _collect_scalars(
        self, custom_cfg: list[dict], runner: Any, mode: str, reserve_prefix: bool = False
    ) -> dict[str, Any]:
        """The scalars of ``mode`` as numbers: names matching ``mean_pattern`` averaged over
        ``window_size``, the others' latest value, then the statistics of ``custom_cfg`` (a
        copy whose windows ``_parse_windows_size`` made ints). Keys lose their ``mode/``
        prefix unless ``reserve_prefix``."""
        return self._collect_resolved(custom_cfg, runner, mode, reserve_prefix, self.mean_pattern)

    def _collect_resolved(
        self,
        custom_cfg: list[dict],
        runner: Any,
        mode: str,
        reserve_prefix: bool,
        mean_pattern: re.Pattern[str],
    ) -> dict[str, Any]:
        return collect_scalars(
            runner.message_hub.log_scalars,
            mode,
            window_size=self._mean_window,
            mean_pattern=mean_pattern,
            statistics=statistics_of(custom_cfg) if custom_cfg else [],
            keep_prefix=reserve_prefix,
        )

    def _collect_non_scalars(self, runner: Any, mode: str) -> dict[str, Any]:
        """The runtime information of ``mode`` (a confusion matrix, a table...), keys with
        their ``mode/`` prefix only when ``log_with_hierarchy``."""
        return collect_non_scalars(runner.message_hub.runtime_info, mode, self.log_with_hierarchy)

    def _remove_prefix(self, string: str, prefix: str) -> str:
        """``string`` without ``prefix`` (``'train/loss'``, ``'train/'`` → ``'loss'``)."""
        return string[len(prefix) :] if string.startswith(prefix) else string

    def _get_max_memory(self, runner: Any) -> int | None:
        """Peak accelerator memory in MiB of the model's device since the last call (None
        without one); see ``runner_view.mmengine_max_memory_mib``."""
        return mmengine_max_memory_mib(runner)

    def _get_iter(self, runner: Any, batch_idx: int | None = None) -> int:
        """The 1-based iteration a line shows: ``batch_idx + 1`` by epoch, else the runner's."""
        if not self.by_epoch:
            return runner.iter + 1
        if batch_idx is None:
            raise TypeError("LogProcessor._get_iter needs batch_idx when by_epoch=True")
        return batch_idx + 1

    def _get_epoch(self, runner: Any, mode: str) -> int:
        """The epoch a ``'train'`` or ``'val'`` line shows: 1-based while training; for
        validation, the epoch just finished (0 when no training runs)."""
        if mode == "train":
            return runner.epoch + 1
        if mode == "val":
            # The train loop has already counted the epoch that validation follows.
            return runner.epoch if has_train_loop(runner) else 0
        raise ValueError(f"runner mode should be 'train' or 'val', but got {mode}")

    def _get_cur_loop(self, runner: Any, mode: str) -> Any:
        """The runner's loop of ``mode``: ``train_loop``, ``val_loop``, else ``test_loop``."""
        if mode == "train":
            return runner.train_loop
        if mode == "val":
            return runner.val_loop
        return runner.test_loop

    def _get_dataloader_size(self, runner: Any, mode: str) -> int | None:
        """How many batches the loop of ``mode`` has (None for a loader without a length, an
        iterable dataset, where MMEngine raises a TypeError)."""
        try:
            return len(self._get_cur_loop(runner, mode).dataloader)
        except TypeError:
            return None


# The methods whose replacement changes how the line is computed, with their own functions.
_COSTLY = frozenset(("_collect_scalars", "_parse_windows_size", "_get_max_memory"))
_DEFAULTS = {name: MMEngineSteps.__dict__[name] for name in _COSTLY}
_COLLECT = _DEFAULTS["_collect_scalars"]
_PARSE = _DEFAULTS["_parse_windows_size"]
_MEMORY = _DEFAULTS["_get_max_memory"]


def own_steps(processor: Any) -> bool:
    """Whether none of ``_COSTLY`` is replaced on ``processor``: the line may take treadle's
    path. Asked at every line (three class attribute reads and a look at the instance's
    attributes, a fraction of a microsecond), so a replacement made after the processor was
    built (a test's ``processor._collect_scalars = MagicMock(...)``, ``patch.object`` on the
    class) is honoured too.
    """
    cls = type(processor)
    return (
        cls._collect_scalars is _COLLECT
        and cls._parse_windows_size is _PARSE
        and cls._get_max_memory is _MEMORY
        and _COSTLY.isdisjoint(processor.__dict__)
    )


def replaced(processor: Any, name: str) -> bool:
    """Whether ``processor``'s ``name`` (one of ``_COSTLY``) is not treadle's own: a subclass
    overrides it, or it was assigned on the instance or patched on the class."""
    return name in processor.__dict__ or getattr(type(processor), name) is not _DEFAULTS[name]


def epoch_timing_cfg(custom_cfg: list[dict], mode: str) -> list[dict]:
    """``custom_cfg`` plus the epoch means of ``time`` and ``data_time`` that a val/test epoch
    line adds unless an entry already reads them (MMEngine's steps, in its dict form)."""
    covered = {str(entry.get("data_src")).removeprefix(f"{mode}/") for entry in custom_cfg}
    extra = [
        dict(data_src=key, window_size="epoch", method_name="mean")
        for key in ("time", "data_time")
        if key not in covered
    ]
    return copy.deepcopy(list(custom_cfg)) + extra
