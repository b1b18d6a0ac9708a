"""LogProcessor: turns the message hub's scalars into the log line and the tag for trackers."""

from __future__ import annotations

import re
import warnings

from treadle.runner.registry import LOG_PROCESSORS

from . import runner_view
from .collect import collect_scalars, strip_mode
from .custom_cfg import Statistic, parse_custom_cfg, warn_suspicious, window_below_one
from .errors import MeanPatternError
from .line_format import (
    epoch_header,
    format_eta,
    format_items,
    format_pass_time,
    iter_header,
)
from .mmengine_steps import MMEngineSteps, epoch_timing_cfg, own_steps, replaced
from .runner_view import MODES, has_train_loop, max_memory_mib

# A pattern no name matches.
_NEVER = re.compile(r"(?!)")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_MEAN_PATTERN = r".*(loss|time|data_time|grad_norm).*"
TIMING_KEYS = ("time", "data_time")


def _warn_arguments(window_size: Any, num_digits: Any) -> None:
    """Warn of a ``window_size`` or ``num_digits`` MMEngine builds with but that is suspicious
    (stacklevel: where the LogProcessor is built)."""
    notes = []
    if isinstance(window_size, bool):
        notes.append(f"window_size={window_size} is read as the int {int(window_size)}")
    elif isinstance(window_size, int) and window_size < 1:
        notes.append(window_below_one(window_size))
    elif window_size is not None and not isinstance(window_size, int):
        notes.append(
            f"window_size={window_size!r} is not an int: every line that averages a loss or a "
            f"time will fail with MMEngine's error (The type of window size should be int)"
        )
    if isinstance(num_digits, bool) or not isinstance(num_digits, int) or num_digits < 0:
        notes.append(
            f"num_digits={num_digits!r} is not an int >= 0: every log line will fail with a "
            f"ValueError, as in MMEngine (a format precision is a number of digits)"
        )
    for note in notes:
        warnings.warn(f"LogProcessor {note}", UserWarning, stacklevel=3)


def _check_mode(method: str, mode: Any, allowed: tuple[str, ...]) -> None:
    if mode not in allowed:
        raise ValueError(f"LogProcessor.{method}: mode must be one of {allowed}, got {mode!r}")


@LOG_PROCESSORS.register_module()
class LogProcessor(MMEngineSteps):
    """Formats what hooks left in ``runner.message_hub`` into a log line and a tag dict.

    The LoggerHook calls it at its logging interval: losses and times are averaged over the last
    ``window_size`` iterations, the learning rate and other values are reported as last seen,
    and the tag goes to the visualizer (``vis_data/scalars.json``). Losses reach the hub as
    tensors and become numbers here, once per interval: the training step never waits for the
    device because of logging.

    Args:
        window_size: how many iterations losses and times are averaged over.
        by_epoch: ``Epoch(train) [1][10/1563]`` lines if True, ``Iter(train) [10/1000]`` if
            False.
        custom_cfg: extra statistics, a list of dicts with ``data_src`` (scalar name without
            ``train/``), ``method_name`` ('mean', 'max', 'min', 'current' or one registered with
            ``HistoryBuffer.register_statistics``), optional ``window_size`` (an int, 'epoch' or
            'global') and ``log_name`` (a new name; without it the entry replaces the default
            statistic of ``data_src``).
        num_digits: decimals of the numbers in the line.
        log_with_hierarchy: tag keys keep their mode (``train/loss``, ``val/accuracy``).
        mean_pattern: names (without the mode) averaged over the window; others report their
            latest value.

    Train and validation timings never share a tag key: a train tag has ``time`` and
    ``data_time`` (MMEngine's keys), a val or test tag ``val/time``, ``val/data_time``,
    ``test/time``, ``test/data_time``, so curves plotted from ``scalars.json`` stay apart.

    The line is built from MMEngine's steps (``_get_cur_loop``, ``_get_iter``, ``_get_epoch``,
    ``_collect_scalars``, ``_collect_non_scalars``, ``_parse_windows_size``,
    ``_get_max_memory``...; see ``mmengine_steps.py``): a subclass that overrides one of them
    changes the line as it would MMEngine's.

    Example:
        >>> processor = LogProcessor(
        ...     window_size=50,
        ...     custom_cfg=[dict(data_src='loss', log_name='loss_epoch', method_name='mean',
        ...                      window_size='epoch')])
        >>> processor.by_epoch
        True

        A line it writes: ``Epoch(train)  [1][  10/1563]  lr: 1.0000e-03  eta: 0:18:23  time:
        0.1414  data_time: 0.0077  loss: 5.3465  loss_epoch: 5.4001``.
    """

    def __init__(
        self,
        window_size: int = 10,
        by_epoch: bool = True,
        custom_cfg: list[dict] | None = None,
        num_digits: int = 4,
        log_with_hierarchy: bool = False,
        mean_pattern: str = DEFAULT_MEAN_PATTERN,
    ) -> None:
        # What MMEngine builds with, treadle builds with (a window of 0 or below, a num_digits
        # that fails when formatting...), warning of what is suspicious.
        _warn_arguments(window_size, num_digits)
        self.window_size = window_size
        self.by_epoch = bool(by_epoch)
        self.custom_cfg = custom_cfg  # checked here, when built
        self.num_digits = num_digits
        self.log_with_hierarchy = bool(log_with_hierarchy)
        try:
            self.mean_pattern = re.compile(mean_pattern)
        except (re.error, TypeError) as error:
            raise MeanPatternError(
                f"LogProcessor mean_pattern {mean_pattern!r} is not a regular expression: {error}"
            ) from None

    @property
    def custom_cfg(self) -> list[dict]:
        """The ``custom_cfg`` entries; assigning a new list checks it, as building does."""
        return self._custom_cfg

    @custom_cfg.setter
    def custom_cfg(self, custom_cfg: list[dict] | None) -> None:
        self._statistics = parse_custom_cfg(custom_cfg, getattr(self, "by_epoch", True))
        self._custom_cfg = list(custom_cfg) if custom_cfg else []
        # Where the processor was built (or custom_cfg assigned): two frames up from here.
        warn_suspicious(self._statistics, stacklevel=3)

    @property
    def _mean_window(self) -> Any:
        """``window_size`` as the buffers' means take it: 0 (the whole history, MMEngine's
        ``[-0:]``) as None and a bool as its int, of which the processor warned when built."""
        window = self.window_size
        if type(window) is int and window > 0:
            return window
        if isinstance(window, int) and not window:
            return None
        return int(window) if isinstance(window, bool) else window

    # -- after an iteration -------------------------------------------------------------------

    def get_log_after_iter(self, runner: Any, batch_idx: int, mode: str) -> tuple[dict, str]:
        """The tag and the line after iteration ``batch_idx`` (0-based, within the epoch) of
        ``mode`` ('train', 'val' or 'test').

        Example line: ``Epoch(train)  [1][  10/1563]  lr: 1.0000e-03  eta: 0:18:23  time:
        0.1414  data_time: 0.0077  memory: 392  loss: 5.3465``.
        """
        _check_mode("get_log_after_iter", mode, MODES)
        hub = runner.message_hub
        trained = has_train_loop(runner)
        own = own_steps(self)
        log_tag, tag = self._iter_scalars(runner, batch_idx, mode, own)
        if mode == "train" and trained:
            # fp16 loss scaling only: the scale, and the steps it skipped since the last line.
            from treadle.runner.optim.optimizer.amp_overflow import loss_scale_items

            amp = loss_scale_items(getattr(runner, "optim_wrapper", None), runner.iter)
            log_tag.update(amp)
            if self.log_with_hierarchy:
                amp = {f"train/{key}": value for key, value in amp.items()}
            tag.update(amp)

        # Learning rates come first, in scientific notation (several with several optimizers).
        lr_parts = []
        for key, value in tag.items():
            if key.endswith("lr"):
                name = strip_mode(key, mode)
                log_tag.pop(name, None)
                lr_parts.append(f"{name}: {value:.{self.num_digits}e}")

        line = self._iter_header(runner, batch_idx, mode, tag, trained)
        tag["iter"] = runner.iter + 1 if trained else 0
        line += " ".join(lr_parts) + "  "

        # The timer's values, with the eta it computed, have a fixed place in the line.
        if all(key in log_tag for key in TIMING_KEYS) and "eta" in hub.runtime_info:
            line += (
                f"eta: {format_eta(hub.get_info('eta'))}  "
                f"time: {log_tag.pop('time'):.{self.num_digits}f}  "
                f"data_time: {log_tag.pop('data_time'):.{self.num_digits}f}  "
            )

        memory = self._line_memory(runner, own)
        if memory is not None:
            line += f"memory: {memory}  "
            tag["memory"] = memory

        if mode == "train":
            line += format_items(log_tag, self.num_digits)
        elif mode == "val":
            # A val line's other scalars are the previous epoch's metrics, not this iteration's:
            # MMEngine shows only names that start with 'val/loss'; test lines show none.
            # treadle's own validation loss is left out: its history holds the earlier passes'
            # values only (the epoch line shows this pass's).
            losses = {k: v for k, v in log_tag.items() if k.startswith("val/loss")}
            if losses:
                own_losses = runner_view.eval_loss_names(runner, mode)
                losses = {k: v for k, v in losses.items() if k not in own_losses}
            if losses:
                line += format_items(losses, self.num_digits)
        return self._separate_timings(tag, mode), line

    def _iter_scalars(self, runner: Any, batch_idx: int, mode: str, own: bool) -> tuple[dict, dict]:
        """``(log_tag, tag)``: the scalars without their mode for the line, and the tag's
        (with the mode when ``log_with_hierarchy``)."""
        if own or not self._collect_replaced():
            log_tag = self._scalars(runner, mode, batch_idx + 1, keep_prefix=False)
            if not self.log_with_hierarchy:
                return log_tag, dict(log_tag)
            return log_tag, self._scalars(runner, mode, batch_idx + 1, keep_prefix=True)
        parsed = self._parse_windows_size(runner, batch_idx, self.custom_cfg)
        log_tag = self._collect_step(parsed, runner, mode, None, self.mean_pattern)
        if not self.log_with_hierarchy:
            return log_tag, dict(log_tag)
        return log_tag, self._collect_step(parsed, runner, mode, True, self.mean_pattern)

    def _iter_header(self, runner: Any, batch_idx: int, mode: str, tag: dict, trained: bool) -> str:
        if not self.by_epoch:
            if mode == "train":
                # Iteration-based training counts iterations of the whole run.
                current = self._get_iter(runner, batch_idx)
                return iter_header(mode, by_epoch=False, current=current, total=runner.max_iters)
            total = self._get_dataloader_size(runner, mode)
            return iter_header(mode, by_epoch=False, current=batch_idx + 1, total=total)
        total = self._get_dataloader_size(runner, mode)
        current = self._get_iter(runner, batch_idx)
        if mode == "test":
            return iter_header(mode, by_epoch=True, current=current, total=total)
        epoch = self._get_epoch(runner, mode)
        tag["epoch"] = epoch
        return iter_header(
            mode,
            by_epoch=True,
            current=current,
            total=total,
            epoch=epoch,
            max_epochs=runner.max_epochs if trained else None,
        )

    def _line_memory(self, runner: Any, own: bool) -> int | None:
        if not own and replaced(self, "_get_max_memory"):
            # Asked only where MMEngine's line asks it: with an accelerator in use.
            return self._get_max_memory(runner) if runner_view.counts_memory() else None
        return max_memory_mib(runner)

    # -- after a val or test epoch ------------------------------------------------------------

    def get_log_after_epoch(
        self, runner: Any, batch_idx: int, mode: str, with_non_scalar: bool = False
    ) -> tuple[dict, str]:
        """The tag and the line after a val or test epoch: its metrics, then its mean times.

        ``batch_idx`` is what MMEngine's LoggerHook passes (the loader's length); the epoch
        averages cover exactly the epoch's iterations, the loader's length, whatever it is.
        Runtime information of the mode (a confusion matrix...) is in the line, and in the tag
        when ``with_non_scalar``.

        Example line: ``Epoch(val) [1][10/10]    accuracy: 96.2500  data_time: 0.0021  time:
        0.0048  val_time: 1.2s`` (``val_time``, how long the whole pass took, when
        IterTimerHook measured it).
        """
        _check_mode("get_log_after_epoch", mode, ("val", "test"))
        total = self._get_dataloader_size(runner, mode)
        epoch = self._get_epoch(runner, mode) if self.by_epoch and mode == "val" else None
        line = epoch_header(mode, by_epoch=self.by_epoch, total=total, epoch=epoch)

        epoch_length = total if total is not None else batch_idx + 1
        scalars = self._epoch_scalars(runner, mode, epoch_length)
        non_scalars = self._collect_non_scalars(runner, mode)
        timing_names = {*TIMING_KEYS, *(f"{mode}/{key}" for key in TIMING_KEYS)}
        metrics = {k: v for k, v in scalars.items() if k not in timing_names}
        timings = {k: v for k, v in scalars.items() if k in timing_names}

        line += format_items({**metrics, **non_scalars, **timings}, self.num_digits)
        # IterTimerHook's measure of the whole pass (runtime info 'val_time'/'test_time'): in
        # the line only, never a scalar of the trackers' curves.
        pass_time = runner.message_hub.runtime_info.get(f"{mode}_time")
        if isinstance(pass_time, (int, float)):
            line += f"  {format_pass_time(mode, pass_time)}"
        tag = {**metrics, **non_scalars} if with_non_scalar else metrics
        tag.update(timings)
        return self._separate_timings(tag, mode), line

    def _epoch_scalars(self, runner: Any, mode: str, epoch_length: int) -> dict[str, Any]:
        """The epoch line's scalars: times averaged over the whole epoch unless custom_cfg says
        otherwise; a metric named like a loss ('val/loss') is each pass's own result, not a
        mean over the last window_size passes (MMEngine averages it)."""
        if not own_steps(self) and self._collect_replaced():
            cfg = epoch_timing_cfg(self.custom_cfg, mode)
            # 'epoch' windows are batch_idx + 1 iterations long: exactly this epoch's.
            parsed = self._parse_windows_size(runner, epoch_length - 1, cfg)
            # A replaced _collect_scalars that calls MMEngine's averages the names matching
            # mean_pattern: a metric named like a loss is a mean over passes again.
            return self._collect_step(parsed, runner, mode, self.log_with_hierarchy, _NEVER)
        covered = {strip_mode(f"{s.data_src}", mode) for s in self._statistics}
        epoch_means = [
            Statistic(key, key, "mean", "epoch", origin="epoch timing")
            for key in TIMING_KEYS
            if key not in covered
        ]
        return self._scalars(
            runner,
            mode,
            epoch_length,
            self.log_with_hierarchy,
            self._statistics + epoch_means,
            mean_pattern=_NEVER,
        )

    # -- shared -------------------------------------------------------------------------------

    def _collect_replaced(self) -> bool:
        """Whether the scalars must come through MMEngine's steps (``_parse_windows_size``,
        then ``_collect_scalars``): one of them is replaced."""
        return replaced(self, "_collect_scalars") or replaced(self, "_parse_windows_size")

    def _collect_step(
        self,
        parsed: list[dict],
        runner: Any,
        mode: str,
        reserve_prefix: bool | None,
        mean_pattern: re.Pattern[str],
    ) -> dict[str, Any]:
        """One ``_collect_scalars`` call of MMEngine's line, with its arguments (``None``: the
        three-argument call); treadle's collection when only ``_parse_windows_size`` is
        replaced."""
        if replaced(self, "_collect_scalars"):
            if reserve_prefix is None:
                return dict(self._collect_scalars(parsed, runner, mode))
            return dict(self._collect_scalars(parsed, runner, mode, reserve_prefix))
        return self._collect_resolved(parsed, runner, mode, bool(reserve_prefix), mean_pattern)

    def _scalars(
        self,
        runner: Any,
        mode: str,
        epoch_length: int,
        keep_prefix: bool,
        statistics: list[Statistic] | None = None,
        mean_pattern: re.Pattern[str] | None = None,
    ) -> dict[str, Any]:
        # treadle's own path: the entries checked when built, their windows resolved here.
        statistics = self._statistics if statistics is None else statistics
        # runner.iter is read only for a 'global' window, as MMEngine's line reads it: asking
        # it builds the train loop in a run that only validates or tests.
        needs_iter = any(statistic.window_size == "global" for statistic in statistics)
        return collect_scalars(
            runner.message_hub.log_scalars,
            mode,
            window_size=self._mean_window,
            mean_pattern=self.mean_pattern if mean_pattern is None else mean_pattern,
            statistics=statistics,
            epoch_length=epoch_length,
            global_length=runner.iter + 1 if needs_iter else None,
            keep_prefix=keep_prefix,
        )

    def _separate_timings(self, tag: dict, mode: str) -> dict:
        """Give val/test timings their mode, keeping the order of the keys: one plotted 'time'
        curve would otherwise mix training steps with validation steps."""
        if mode == "train" or self.log_with_hierarchy:
            return tag
        return {(f"{mode}/{k}" if k in TIMING_KEYS else k): v for k, v in tag.items()}
