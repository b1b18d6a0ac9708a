"""ProgressBarHook: a live rich progress bar under the log lines, on a terminal only.

The bar shows the epoch, the iteration, the loss and the time left. It adds no device sync:
the iteration count is a Python int, and the loss shown is read from the message hub only at
the logger's interval, right after LoggerHook has turned it into a number for the log line.
In a pipe, a file or CI the hook does nothing, so logs stay plain lines.

Training and validation are separate tasks: the train task's time left is IterTimerHook's ETA
(validation runs and checkpoint saves to come included, see there), not rich's estimate from
the bar's own speed, which drops while training waits for validation; the validation task
starts over at each pass and, once done, shows how long the pass took.
"""

from __future__ import annotations

import atexit
import datetime
import logging
import sys
from typing import Any, TextIO

from ..registry import HOOKS
from .hook import DATA_BATCH, Hook

# How often the loss on the bar changes when no LoggerHook says (iterations).
_DEFAULT_INTERVAL = 10


class _LinesAboveBar:
    """A stream for the logger's console handler while the bar is live: each whole line is
    printed through rich's console, which draws it above the bar. Lines are not re-wrapped by
    rich (``soft_wrap``): the terminal wraps a long log line as it would without a bar."""

    def __init__(self, console: Any) -> None:
        self._console = console
        self._pending = ""

    def write(self, text: str) -> int:
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        if lines:
            from rich.text import Text

            for line in lines:
                self._console.print(Text.from_ansi(line), soft_wrap=True)
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.write("\n")


def _eta_column() -> Any:
    """A rich column with a task's ``eta`` field (seconds) when it has one, rich's own
    estimate otherwise (rich is imported only once a bar is drawn)."""
    from rich.progress import TimeRemainingColumn
    from rich.text import Text

    class EtaColumn(TimeRemainingColumn):
        def render(self, task: Any) -> Any:
            eta = task.fields.get("eta")
            if eta is None:
                return super().render(task)
            # The log line's format (0:18:23).
            return Text(str(datetime.timedelta(seconds=int(eta))), style="progress.remaining")

    return EtaColumn()


def _is_terminal(file: TextIO) -> bool:
    isatty = getattr(file, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed file
        return False


@HOOKS.register_module()
class ProgressBarHook(Hook):
    """Draw a live progress bar (epoch, iteration, loss, eta) below the scrolling log lines.

    The ``treadle train`` and ``treadle test`` commands add this hook when their output is a
    terminal; add it yourself with ``custom_hooks=[dict(type='ProgressBarHook')]``.

    Args:
        enabled: True draws the bar, False never does; None (the default) draws it when
            ``file`` is a terminal and this process is rank 0.
        interval: update the loss shown every this many iterations; None (the default) uses
            the interval of the runner's LoggerHook (10 without one), so reading the loss
            costs no extra device sync.
        file: where to draw; default: ``sys.stdout`` at the time the bar starts.
        force_terminal: passed to rich's Console (tests draw into a StringIO with True).

    Example:
        >>> hook = ProgressBarHook(enabled=False)  # in a pipe: the hook is a no-op
        >>> hook.priority
        'VERY_LOW'
    """

    priority = "VERY_LOW"

    def __init__(
        self,
        enabled: bool | None = None,
        interval: int | None = None,
        file: TextIO | None = None,
        force_terminal: bool | None = None,
    ) -> None:
        if enabled is not None and not isinstance(enabled, bool):
            raise TypeError(
                f"ProgressBarHook: enabled must be True, False or None, got {enabled!r}"
            )
        if interval is not None and (
            isinstance(interval, bool) or not isinstance(interval, int) or interval < 1
        ):
            raise ValueError(
                f"ProgressBarHook: interval must be a positive int or None, got {interval!r}"
            )
        self.enabled = enabled
        self.interval = interval
        self.file = file
        self.force_terminal = force_terminal
        self._progress: Any = None
        self._train_task: Any = None
        # One task per evaluation mode ('val', 'test'), started over at each pass.
        self._eval_tasks: dict[str, Any] = {}
        self._eval_task: Any = None
        self._loss_text = ""
        self._by_epoch = False
        self._swapped: list[tuple[logging.StreamHandler, Any]] = []

    # Starting and stopping the bar.
    def _should_draw(self, runner: Any) -> bool:
        if self.enabled is not None:
            return self.enabled
        if getattr(runner, "rank", 0) != 0:
            return False
        if self.force_terminal is not None:
            return self.force_terminal
        return _is_terminal(self.file if self.file is not None else sys.stdout)

    def _start(self, runner: Any) -> bool:
        """Start the live display once per run; False when no bar is drawn."""
        if self._progress is not None:
            return True
        if not self._should_draw(runner):
            return False
        # rich is imported here so that a run in a pipe never pays for it.
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        file = self.file if self.file is not None else sys.stdout
        console = Console(file=file, force_terminal=self.force_terminal)
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"),
            TextColumn("eta"),
            _eta_column(),
            console=console,
            redirect_stdout=True,
            redirect_stderr=True,
        )
        self._progress.start()
        # The logger's console handler holds the real stdout it was built with, so the
        # redirection of sys.stdout does not reach it: point it at a proxy that prints
        # through the live display, above the bar.
        streams = {id(s) for s in (file, sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)}
        logger = getattr(runner, "logger", None)
        for handler in getattr(logger, "handlers", ()):
            if type(handler) is logging.StreamHandler and id(handler.stream) in streams:
                old = handler.setStream(_LinesAboveBar(console))
                self._swapped.append((handler, old))
        atexit.register(self._stop)  # a crash mid-run still gives the terminal back
        return True

    def _stop(self) -> None:
        if self._progress is None:
            return
        for handler, stream in self._swapped:
            handler.flush()
            handler.setStream(stream)
        self._swapped = []
        self._progress.stop()
        self._progress = None
        self._train_task = self._eval_task = None
        self._eval_tasks = {}
        atexit.unregister(self._stop)

    def after_run(self, runner: Any) -> None:
        self._stop()

    # Training.
    def before_train(self, runner: Any) -> None:
        if not self._start(runner):
            return
        if self.interval is None:
            self.interval = _DEFAULT_INTERVAL
            for hook in getattr(runner, "hooks", ()):
                # By name, not isinstance: this hook does not depend on LoggerHook's module.
                is_logger = any(c.__name__ == "LoggerHook" for c in type(hook).__mro__)
                if is_logger and isinstance(getattr(hook, "interval", None), int):
                    self.interval = hook.interval
        loop = runner.train_loop
        dataloader = getattr(loop, "dataloader", None)
        try:
            per_epoch = len(dataloader)
        except TypeError:
            per_epoch = None
        # An epoch-based loop runs max_epochs whole epochs; an iteration-based one does not.
        self._by_epoch = bool(per_epoch) and runner.max_iters == runner.max_epochs * per_epoch
        self._loss_text = ""
        self._train_task = self._progress.add_task(
            self._train_description(runner),
            total=runner.max_iters,
            completed=runner.iter,
            status="",
            eta=None,
        )

    def _train_description(self, runner: Any) -> str:
        if self._by_epoch:
            return f"Epoch {runner.epoch + 1}/{runner.max_epochs}"
        return "Train"

    def before_train_epoch(self, runner: Any) -> None:
        if self._train_task is not None:
            self._progress.update(self._train_task, description=self._train_description(runner))

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | None = None,
    ) -> None:
        if self._train_task is None:
            return
        done = runner.iter + 1  # the loop counts this iteration after the hooks
        if done % self.interval == 0 or done == runner.max_iters:
            self._loss_text = self._read_loss(runner)
            # IterTimerHook's estimate (a Python float: no sync), read at the same interval.
            eta = runner.message_hub.runtime_info.get("eta")
            if isinstance(eta, (int, float)):
                self._progress.update(self._train_task, eta=eta)
        self._progress.update(self._train_task, completed=done, status=self._loss_text)

    @staticmethod
    def _read_loss(runner: Any) -> str:
        hub = runner.message_hub
        try:
            value = hub.get_scalar("train/loss").current()
        except (KeyError, ValueError):  # no loss logged (yet)
            return ""
        return f"loss: {float(value):.4f}"

    def after_train(self, runner: Any) -> None:
        if self._train_task is not None:
            self._progress.update(self._train_task, completed=runner.max_iters, eta=0.0)

    # Validation and testing: a task of their own beside training's, started over each pass.
    def _before_eval(self, runner: Any, mode: str) -> None:
        if mode == "test":
            self._start(runner)
        if self._progress is None:
            return
        loop = runner.val_loop if mode == "val" else runner.test_loop
        try:
            total = len(loop.dataloader)
        except TypeError:
            total = None
        task = self._eval_tasks.get(mode)
        if task is None:
            task = self._progress.add_task(mode.capitalize(), total=total, status="")
            self._eval_tasks[mode] = task
        else:
            self._progress.reset(task, total=total, completed=0, status="")
        self._eval_task = task

    def _after_eval(self, runner: Any, mode: str) -> None:
        if self._eval_task is None:
            return
        # IterTimerHook's measure of the pass, when it ran (its after_*_epoch comes first).
        took = runner.message_hub.runtime_info.get(f"{mode}_time")
        if isinstance(took, (int, float)):
            self._progress.update(self._eval_task, status=f"took {took:.1f}s")
        self._eval_task = None

    def before_val_epoch(self, runner: Any) -> None:
        self._before_eval(runner, "val")

    def before_test_epoch(self, runner: Any) -> None:
        self._before_eval(runner, "test")

    def after_val_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: Any = None,
    ) -> None:
        if self._eval_task is not None:
            self._progress.advance(self._eval_task)
            task = next(t for t in self._progress.tasks if t.id == self._eval_task)
            if task.total is not None and task.completed >= task.total:
                # The metrics' log lines come next: show the finished pass above which they
                # print, not the last frame the refresh thread happened to draw.
                self._progress.refresh()

    after_test_iter = after_val_iter

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        self._after_eval(runner, "val")

    def after_test_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        self._after_eval(runner, "test")
