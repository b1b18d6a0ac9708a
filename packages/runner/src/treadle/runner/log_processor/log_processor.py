"""LogProcessor: turns the message hub's scalars into the log line and the tag for trackers."""

from __future__ import annotations

import re

from treadle.runner.registry import LOG_PROCESSORS

from .collect import collect_non_scalars, collect_scalars, strip_mode
from .custom_cfg import Statistic, parse_custom_cfg
from .line_format import (
    epoch_header,
    format_eta,
    format_items,
    format_pass_time,
    iter_header,
)
from .runner_view import (
    MODES,
    dataloader_length,
    has_train_loop,
    log_epoch,
    max_memory_mib,
)

# A pattern no name matches.
_NEVER = re.compile(r"(?!)")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_MEAN_PATTERN = r".*(loss|time|data_time|grad_norm).*"
TIMING_KEYS = ("time", "data_time")


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"LogProcessor {name} must be an int, got {type(value).__name__}: {value!r}"
        )
    if value < 1:
        raise ValueError(f"LogProcessor {name} must be at least 1, got {value}")
    return value


def _check_mode(method: str, mode: Any, allowed: tuple[str, ...]) -> None:
    if mode not in allowed:
        raise ValueError(f"LogProcessor.{method}: mode must be one of {allowed}, got {mode!r}")


@LOG_PROCESSORS.register_module()
class LogProcessor:
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
        self.window_size = _positive_int("window_size", window_size)
        self.by_epoch = bool(by_epoch)
        self._statistics = parse_custom_cfg(custom_cfg, self.by_epoch)
        self.custom_cfg = list(custom_cfg) if custom_cfg else []
        if isinstance(num_digits, bool) or not isinstance(num_digits, int) or num_digits < 0:
            raise ValueError(f"LogProcessor num_digits must be an int >= 0, got {num_digits!r}")
        self.num_digits = num_digits
        self.log_with_hierarchy = bool(log_with_hierarchy)
        try:
            self.mean_pattern = re.compile(mean_pattern)
        except (re.error, TypeError) as error:
            raise ValueError(
                f"LogProcessor mean_pattern {mean_pattern!r} is not a regular expression: {error}"
            ) from None

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
        log_tag = self._scalars(runner, mode, batch_idx + 1, keep_prefix=False)
        tag = (
            self._scalars(runner, mode, batch_idx + 1, keep_prefix=True)
            if self.log_with_hierarchy
            else dict(log_tag)
        )
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
        if not trained:
            tag["iter"] = 0
        else:
            tag["iter"] = runner.iter + 1
        line += " ".join(lr_parts) + "  "

        # The timer's values, with the eta it computed, have a fixed place in the line.
        if all(key in log_tag for key in TIMING_KEYS) and "eta" in hub.runtime_info:
            line += (
                f"eta: {format_eta(hub.get_info('eta'))}  "
                f"time: {log_tag.pop('time'):.{self.num_digits}f}  "
                f"data_time: {log_tag.pop('data_time'):.{self.num_digits}f}  "
            )

        memory = max_memory_mib(runner)
        if memory is not None:
            line += f"memory: {memory}  "
            tag["memory"] = memory

        # Validation and test lines stop here: their other scalars are the previous epoch's
        # metrics, not this iteration's (MMEngine shows none of them either).
        if mode == "train":
            line += format_items(log_tag, self.num_digits)
        return self._separate_timings(tag, mode), line

    def _iter_header(self, runner: Any, batch_idx: int, mode: str, tag: dict, trained: bool) -> str:
        if not self.by_epoch:
            if mode == "train":
                # Iteration-based training counts iterations of the whole run.
                return iter_header(
                    mode, by_epoch=False, current=runner.iter + 1, total=runner.max_iters
                )
            total = dataloader_length(runner, mode)
            return iter_header(mode, by_epoch=False, current=batch_idx + 1, total=total)
        total = dataloader_length(runner, mode)
        if mode == "test":
            return iter_header(mode, by_epoch=True, current=batch_idx + 1, total=total)
        epoch = log_epoch(runner, mode)
        tag["epoch"] = epoch
        return iter_header(
            mode,
            by_epoch=True,
            current=batch_idx + 1,
            total=total,
            epoch=epoch,
            max_epochs=runner.max_epochs if trained else None,
        )

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
        total = dataloader_length(runner, mode)
        epoch = log_epoch(runner, mode) if self.by_epoch and mode == "val" else None
        line = epoch_header(mode, by_epoch=self.by_epoch, total=total, epoch=epoch)

        # Times are averaged over the whole epoch unless custom_cfg says otherwise.
        covered = {strip_mode(s.data_src, mode) for s in self._statistics}
        epoch_means = [
            Statistic(key, key, "mean", "epoch", origin="epoch timing")
            for key in ("time", "data_time")
            if key not in covered
        ]
        epoch_length = total if total is not None else batch_idx + 1
        # Each pass's own results: a metric named like a loss ('val/loss') is the latest value,
        # not a mean over the last window_size passes (MMEngine averages it).
        scalars = self._scalars(
            runner,
            mode,
            epoch_length,
            self.log_with_hierarchy,
            self._statistics + epoch_means,
            mean_pattern=_NEVER,
        )
        non_scalars = collect_non_scalars(
            runner.message_hub.runtime_info, mode, self.log_with_hierarchy
        )
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

    # -- shared -------------------------------------------------------------------------------

    def _scalars(
        self,
        runner: Any,
        mode: str,
        epoch_length: int,
        keep_prefix: bool,
        statistics: list[Statistic] | None = None,
        mean_pattern: re.Pattern[str] | None = None,
    ) -> dict[str, Any]:
        return collect_scalars(
            runner.message_hub.log_scalars,
            mode,
            window_size=self.window_size,
            mean_pattern=self.mean_pattern if mean_pattern is None else mean_pattern,
            statistics=self._statistics if statistics is None else statistics,
            epoch_length=epoch_length,
            global_length=runner.iter + 1,
            keep_prefix=keep_prefix,
        )

    def _separate_timings(self, tag: dict, mode: str) -> dict:
        """Give val/test timings their mode, keeping the order of the keys: one plotted 'time'
        curve would otherwise mix training steps with validation steps."""
        if mode == "train" or self.log_with_hierarchy:
            return tag
        return {(f"{mode}/{k}" if k in TIMING_KEYS else k): v for k, v in tag.items()}

    # -- MMEngine's private helpers, which toolbox code and tests call ------------------------

    def _get_iter(self, runner: Any, batch_idx: int | None = None) -> int:
        """The 1-based iteration a line shows: ``batch_idx + 1`` by epoch, else the runner's."""
        if not self.by_epoch:
            return runner.iter + 1
        if batch_idx is None:
            raise TypeError("LogProcessor._get_iter needs batch_idx when by_epoch=True")
        return batch_idx + 1

    def _get_epoch(self, runner: Any, mode: str) -> int:
        """The epoch a ``'train'`` or ``'val'`` line shows (0 for validation without training)."""
        if mode not in ("train", "val"):
            raise ValueError(f"runner mode should be 'train' or 'val', but got {mode}")
        return log_epoch(runner, mode)

    def _get_max_memory(self, runner: Any) -> int | None:
        """Peak accelerator memory in MiB of the model's device (None without an accelerator)."""
        return max_memory_mib(runner)
