"""LoggerHook: the log line at each interval, scalars to the visualizer, logs to out_dir."""

from __future__ import annotations

import functools
import inspect
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from treadle import fileio

from ..registry import HOOKS
from ..utils import scandir
from .hook import DATA_BATCH, Hook

SUFFIX_TYPE = Sequence[str] | str


def json_ready(value: Any) -> Any:
    """``value`` with tensors and arrays as lists and anything JSON cannot hold left out."""
    if isinstance(value, (list, tuple)):
        return [json_ready(item) for item in value]
    if isinstance(value, dict):
        return {key: json_ready(item) for key, item in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "tolist"):  # torch.Tensor, numpy.ndarray and NumPy scalars
        return value.tolist()
    return None


def _add_scalars_on_the_step_axis(
    visualizer: Any,
    tag: dict,
    step: int,
    file_path: str | None,
    global_step: int,
    epoch: int | None,
) -> None:
    """``visualizer.add_scalars`` with the training iteration and epoch the scalars belong to,
    for every tracker's step axis; a visualizer whose ``add_scalars`` takes neither (an
    MMEngine-style override with a fixed signature) gets MMEngine's call."""
    if _takes_step_axis(type(visualizer)):
        visualizer.add_scalars(
            tag, step=step, file_path=file_path, global_step=global_step, epoch=epoch
        )
    else:
        visualizer.add_scalars(tag, step=step, file_path=file_path)


@functools.cache
def _takes_step_axis(visualizer_type: type) -> bool:
    try:
        parameters = inspect.signature(visualizer_type.add_scalars).parameters
    except (AttributeError, TypeError, ValueError):  # no add_scalars, or a builtin
        return False
    return "global_step" in parameters or any(
        parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters.values()
    )


def _trains_by_epoch(runner: Any) -> bool:
    """Whether the runner has an epoch-based train loop: only then is ``epoch`` worth a
    curve (an iteration-based run is one epoch long)."""
    loop = getattr(runner, "_train_loop", None)
    if loop is None or isinstance(loop, dict):
        return False
    # treadle's loops say which they are; a custom loop is taken for an epoch-based one.
    return bool(getattr(loop, "_by_epoch", True))


def _positive_int(value: Any, argument: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"LoggerHook: {argument} must be an integer, got {value!r}")
    if value <= 0:
        raise ValueError(f"LoggerHook: {argument} must be greater than 0, got {value}")
    return value


def _check_bool(value: Any, argument: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"LoggerHook: {argument} must be a boolean, got {value!r}")
    return value


@HOOKS.register_module()
class LoggerHook(Hook):
    """Log the training line every ``interval`` iterations, the validation and test results at
    the end of each of their epochs, and send the numbers to the visualizer (``scalars.json``
    and every tracker). With ``out_dir``, the run's log files are copied there at the end (any
    treadle.fileio backend), into a folder named after the last folder of the work directory.

    The loss values stay tensors in the message hub between intervals: this hook asks the log
    processor for numbers only on logging iterations, so other steps cost no device sync.

    Steps: every tracker (TensorBoard, W&B, MLflow, ...) receives train and validation scalars
    at the global training iteration, so their curves share one x axis, and the epoch as a
    scalar when training is by epoch. ``log_metric_by_epoch`` decides the step of validation
    results in the log line and ``scalars.json`` only (MMEngine's meaning), where each of them
    also holds the iteration as ``iter`` (what ``treadle plot`` draws against).

    Example:
        >>> default_hooks = dict(logger=dict(type='LoggerHook', interval=50))
        >>> LoggerHook(interval=20, out_dir='s3://bucket/logs', keep_local=False)
        ... # doctest: +ELLIPSIS
        <...LoggerHook object at ...>
    """

    priority = "BELOW_NORMAL"

    def __init__(
        self,
        interval: int = 10,
        ignore_last: bool = True,
        interval_exp_name: int = 1000,
        out_dir: str | Path | None = None,
        out_suffix: SUFFIX_TYPE = (".json", ".log", ".py", "yaml"),
        keep_local: bool = True,
        file_client_args: dict | None = None,
        log_metric_by_epoch: bool = True,
        backend_args: dict | None = None,
    ) -> None:
        self.interval = _positive_int(interval, "interval")
        self.ignore_last = _check_bool(ignore_last, "ignore_last")
        self.interval_exp_name = _positive_int(interval_exp_name, "interval_exp_name")
        self.keep_local = _check_bool(keep_local, "keep_local")
        if out_dir is not None and not isinstance(out_dir, (str, Path)):
            raise TypeError(f"LoggerHook: out_dir must be a str or Path object, got {out_dir!r}")
        if out_dir is None and file_client_args is not None:
            raise ValueError(
                'LoggerHook: file_client_args should be "None" when `out_dir` is not specified.'
            )
        if file_client_args is not None:
            from treadle.logging import print_log

            print_log(
                '"file_client_args" will be deprecated in future. Please use "backend_args" '
                "instead",
                logger="current",
                level=logging.WARNING,
            )
            if backend_args is not None:
                raise ValueError(
                    '"file_client_args" and "backend_args" cannot be set at the same time.'
                )
        if not (
            isinstance(out_suffix, str)
            or (
                isinstance(out_suffix, (list, tuple))
                and all(isinstance(suffix, str) for suffix in out_suffix)
            )
        ):
            raise TypeError(
                f"LoggerHook: out_suffix should be a string or a sequence of string, got "
                f"{out_suffix!r}"
            )
        self.out_suffix = out_suffix if isinstance(out_suffix, str) else tuple(out_suffix)
        self.out_dir = os.fspath(out_dir) if out_dir is not None else None
        # What the user wrote: before_run derives out_dir from it (again on a second run).
        self._out_root = self.out_dir
        self.file_client_args = file_client_args
        self.log_metric_by_epoch = log_metric_by_epoch
        self.json_log_path: str | None = None
        if self.out_dir is not None:
            self.file_backend = fileio.get_file_backend(
                self.out_dir, backend_args=file_client_args or backend_args, enable_singleton=True
            )
        # len(train_dataloader) of the loader last seen: asked once, not at every iteration.
        self._epoch_length: tuple[Any, int] | None = None

    def before_run(self, runner: Any) -> None:
        """Name the json file of this run's scalars, and where logs will be copied."""
        if self._out_root is not None:
            basename = os.path.basename(os.fspath(runner.work_dir).rstrip(os.sep))
            self.out_dir = self.file_backend.join_path(self._out_root, basename)
            runner.logger.info(
                f"Text logs will be saved to {self.out_dir} after the training process."
            )
        self.json_log_path = f"{runner.timestamp}.json"

    # --- per iteration ---

    def _is_end_of_epoch(self, dataloader: Any, batch_idx: int) -> bool:
        return batch_idx + 1 == self._length_of(dataloader)

    def next_train_iter(self, runner: Any, iteration: int, batch_idx: int) -> int | None:
        """The next iteration that logs: an ``interval``-th batch, an ``interval_exp_name``-th
        iteration or the last batch of the epoch."""
        to_line = -(batch_idx + 1) % self.interval
        to_exp_name = -(iteration + 1) % self.interval_exp_name
        length = self._length_of(runner.train_dataloader)
        steps = min(to_line, to_exp_name)
        if batch_idx < length:
            steps = min(steps, length - 1 - batch_idx)
        return iteration + steps

    def _length_of(self, dataloader: Any) -> int:
        cached = self._epoch_length
        if cached is None or cached[0] is not dataloader:
            cached = self._epoch_length = (dataloader, len(dataloader))
        return cached[1]

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | None = None,
    ) -> None:
        """Log the line at every ``interval``-th batch of the epoch (and at its last batch
        unless ``ignore_last``), and the experiment name every ``interval_exp_name`` iters."""
        # The common case (no logging this step) is decided with integer arithmetic only.
        done = runner.iter + 1
        log_now = (batch_idx + 1) % self.interval == 0
        exp_now = done % self.interval_exp_name == 0
        dataloader = runner.train_dataloader
        end = self._is_end_of_epoch(dataloader, batch_idx)
        if exp_now or end:
            runner.logger.info(f"Exp name: {runner.experiment_name}")
        # `max_iters` need not be a multiple of the interval: with ignore_last=False (or an
        # epoch shorter than the interval) the last batches of an epoch get a line of their own.
        if not log_now and (
            not end or (self.ignore_last and self._epoch_length[1] > self.interval)  # type: ignore[index]
        ):
            return
        tag, log_str = runner.log_processor.get_log_after_iter(runner, batch_idx, "train")
        runner.logger.info(log_str)
        epoch = runner.epoch + 1 if _trains_by_epoch(runner) else None
        _add_scalars_on_the_step_axis(
            runner.visualizer, tag, done, self.json_log_path, global_step=done, epoch=epoch
        )

    def after_val_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: Sequence | None = None,
    ) -> None:
        """Log the validation progress line every ``interval`` batches."""
        if (batch_idx + 1) % self.interval == 0:
            _, log_str = runner.log_processor.get_log_after_iter(runner, batch_idx, "val")
            runner.logger.info(log_str)

    def after_test_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: Sequence | None = None,
    ) -> None:
        """Log the test progress line every ``interval`` batches."""
        if (batch_idx + 1) % self.interval == 0:
            _, log_str = runner.log_processor.get_log_after_iter(runner, batch_idx, "test")
            runner.logger.info(log_str)

    # --- per epoch ---

    @staticmethod
    def _train_position(runner: Any, by_epoch: bool) -> int:
        # Asking an unbuilt runner for its epoch would build the train loop (and its
        # dataloader) during a val-only or test-only run: count 0 there instead.
        loop = getattr(runner, "_train_loop", None)
        if loop is None or isinstance(loop, dict):
            return 0
        return runner.epoch if by_epoch else runner.iter

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        """Log the validation results and send them to the visualizer: ``scalars.json`` at the
        epoch (or iteration, with ``log_metric_by_epoch=False``) of training they belong to,
        with the iteration as ``iter``; every tracker at the training iteration, with the
        epoch as a scalar when training is by epoch."""
        tag, log_str = runner.log_processor.get_log_after_epoch(
            runner, len(runner.val_dataloader), "val"
        )
        runner.logger.info(log_str)
        step = self._train_position(runner, self.log_metric_by_epoch)
        # Trackers get the training iteration whatever log_metric_by_epoch says, so the
        # validation curve lines up with the train curves (the train scalars of iteration N
        # are logged at step N, and validation after iteration N runs at runner.iter == N).
        _add_scalars_on_the_step_axis(
            runner.visualizer,
            tag,
            step,
            self.json_log_path,
            global_step=self._train_position(runner, by_epoch=False),
            epoch=runner.epoch if _trains_by_epoch(runner) else None,
        )

    def after_test_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        """Log the test results and write them, non-scalar ones included, to
        ``log_dir/<timestamp>.json``."""
        tag, log_str = runner.log_processor.get_log_after_epoch(
            runner, len(runner.test_dataloader), "test", with_non_scalar=True
        )
        runner.logger.info(log_str)
        json_name = self.json_log_path or f"{runner.timestamp}.json"
        fileio.dump(json_ready(dict(tag)), os.path.join(runner.log_dir, json_name))

    # --- end of the run ---

    def after_run(self, runner: Any) -> None:
        """Close the visualizer (flushing its files), then copy the logs to ``out_dir``."""
        runner.visualizer.close()
        if self.out_dir is None:
            return
        log_dir = os.fspath(runner.log_dir)
        copied = []
        for filename in sorted(scandir(log_dir, self.out_suffix, True)):
            local_path = os.path.join(log_dir, filename)
            out_path = self.file_backend.join_path(self.out_dir, *filename.split(os.sep))
            # Bytes, not text: any file the suffixes select is copied as it is.
            with open(local_path, "rb") as file:
                self.file_backend.put(file.read(), out_path)
            copied.append(os.path.abspath(local_path))
            runner.logger.info(f"The file {local_path} has been uploaded to {out_path}.")
            if not self.keep_local:
                runner.logger.info(
                    f"{local_path} was removed due to the `self.keep_local=False`. You can "
                    f"check the running logs in {out_path}"
                )
        if self.keep_local:
            return
        # The log file is still open in the logger: close it before removing it.
        for handler in runner.logger.handlers:
            if isinstance(handler, logging.FileHandler) and handler.baseFilename in copied:
                handler.close()
        for path in copied:
            os.remove(path)
