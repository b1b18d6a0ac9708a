"""``ProfilerHook``: records the first epoch or iterations of training with torch.profiler."""

from __future__ import annotations

import os
import os.path as osp
from collections.abc import Callable
from typing import Any

import torch

from treadle.dist import get_rank, get_world_size

from ..registry import HOOKS
from .hook import DATA_BATCH, Hook

_TRACE_TYPES = ("log_trace", "tb_trace")


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"ProfilerHook: {name} must be True or False, got {value!r}")
    return value


def _check_trace_config(on_trace_ready: Any, wrong_kind: type[Exception]) -> None:
    """Refuse an ``on_trace_ready`` that is neither None, a callable, nor a dict of a known
    type; ``wrong_kind`` is the error for a value of the wrong kind."""
    if on_trace_ready is None or callable(on_trace_ready):
        return
    if not isinstance(on_trace_ready, dict):
        raise wrong_kind(
            f"ProfilerHook: on_trace_ready must be a callable, a dict or None, got "
            f"{type(on_trace_ready).__name__}"
        )
    trace_type = on_trace_ready.get("type")
    if trace_type not in _TRACE_TYPES:
        raise ValueError(
            f"ProfilerHook: on_trace_ready type must be 'log_trace' or 'tb_trace', "
            f"got {trace_type!r}"
        )


def _per_rank(path: str) -> str:
    """``path`` with the rank before its extension when several processes write traces, so
    they do not overwrite each other's file."""
    if get_world_size() <= 1:
        return path
    root, ext = osp.splitext(path)
    return f"{root}_rank{get_rank()}{ext}"


@HOOKS.register_module()
class ProfilerHook(Hook):
    """Profiles training with ``torch.profiler``: the first epoch (``by_epoch=True``) or the
    first ``profile_times`` iterations, from ``before_run``.

    Output: a Chrome trace (``json_trace_path``; open it in chrome://tracing or Perfetto), and/or
    ``on_trace_ready``: a callable (``torch.profiler`` handler), ``dict(type='log_trace',
    **key_averages_table_args)`` to print the table of operators (``sort_by``, ``row_limit``...),
    or ``dict(type='tb_trace', dir_name=..., worker_name=..., use_gzip=...)`` to write
    TensorBoard traces (``dir_name`` is relative to the run's log dir; default
    ``tf_tracing_logs``; view them with ``pip install torch-tb-profiler``).

    Args:
        by_epoch: profile epochs (only ``profile_times=1``) rather than iterations.
        profile_times: how many epochs or iterations to profile.
        activity_with_cpu: record CPU activity.
        activity_with_cuda: record CUDA kernels.
        schedule: ``torch.profiler.schedule`` arguments (wait, warmup, active, repeat...).
        on_trace_ready: see above.
        record_shapes, profile_memory, with_stack, with_flops: as ``torch.profiler.profile``.
        json_trace_path: where to write the Chrome trace (with ``_rank{r}`` added under
            distributed training).

    Example:
        >>> runner_cfg = dict(custom_hooks=[dict(
        ...     type='ProfilerHook', by_epoch=False, profile_times=10,
        ...     json_trace_path='trace.json')])
    """

    priority = "VERY_LOW"

    def __init__(
        self,
        *,
        by_epoch: bool = True,
        profile_times: int = 1,
        activity_with_cpu: bool = True,
        activity_with_cuda: bool = False,
        schedule: dict | None = None,
        on_trace_ready: Callable | dict | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        json_trace_path: str | None = None,
    ) -> None:
        from torch import profiler

        if not torch.autograd.kineto_available():
            raise RuntimeError(
                "ProfilerHook needs torch built with Kineto (torch.autograd.kineto_available() "
                "is False in this torch build)"
            )
        self.by_epoch = _check_bool("by_epoch", by_epoch)
        if isinstance(profile_times, bool) or not isinstance(profile_times, int):
            raise TypeError(f"ProfilerHook: profile_times must be an int, got {profile_times!r}")
        if profile_times < 1:
            raise ValueError(f"ProfilerHook: profile_times must be at least 1, got {profile_times}")
        if by_epoch and profile_times > 1:
            raise ValueError(
                f"ProfilerHook: with by_epoch=True only the first epoch is profiled "
                f"(profile_times=1), got profile_times={profile_times}; profiling slows "
                f"training, so profile one epoch, or set by_epoch=False to profile "
                f"{profile_times} iterations"
            )
        self.profile_times = profile_times
        self.activities = []
        if _check_bool("activity_with_cpu", activity_with_cpu):
            self.activities.append(profiler.ProfilerActivity.CPU)
        if _check_bool("activity_with_cuda", activity_with_cuda):
            self.activities.append(profiler.ProfilerActivity.CUDA)
        if schedule is not None and not isinstance(schedule, dict):
            raise TypeError(
                f"ProfilerHook: schedule must be a dict of torch.profiler.schedule arguments, "
                f"got {type(schedule).__name__}"
            )
        self.schedule = profiler.schedule(**schedule) if schedule is not None else None
        _check_trace_config(on_trace_ready, TypeError)
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_flops = with_flops
        self.json_trace_path = json_trace_path
        self.profiler: Any = None
        self._closed = False

    def _parse_trace_config(self, runner: Any) -> Callable | None:
        """The ``on_trace_ready`` handler that ``on_trace_ready`` describes (MMEngine's name:
        toolbox tests call it after setting ``on_trace_ready``, so it checks it again)."""
        ready = self.on_trace_ready
        _check_trace_config(ready, ValueError)  # MMEngine raises ValueError here
        if ready is None or callable(ready):
            return ready
        cfg = dict(ready)
        trace_type = cfg.pop("type")
        if trace_type == "log_trace":

            def print_table(prof: Any) -> None:
                print(prof.key_averages().table(**cfg))

            return print_table
        dir_name = cfg.get("dir_name", "tf_tracing_logs")
        cfg["dir_name"] = dir_name if osp.isabs(dir_name) else osp.join(runner.log_dir, dir_name)
        runner.logger.info(f"ProfilerHook writes TensorBoard traces to {cfg['dir_name']}")
        return torch.profiler.tensorboard_trace_handler(**cfg)

    def before_run(self, runner: Any) -> None:
        limit = runner.max_epochs if self.by_epoch else runner.max_iters
        unit = "epochs" if self.by_epoch else "iterations"
        if limit is not None and limit < self.profile_times:
            raise ValueError(
                f"ProfilerHook: profile_times={self.profile_times} is more than the run's "
                f"{limit} {unit}"
            )
        self.profiler = torch.profiler.profile(
            activities=self.activities,
            schedule=self.schedule,
            on_trace_ready=self._parse_trace_config(runner),
            record_shapes=self.record_shapes,
            profile_memory=self.profile_memory,
            with_stack=self.with_stack,
            with_flops=self.with_flops,
        )
        self.profiler.__enter__()
        self._closed = False
        runner.logger.info("ProfilerHook: profiling...")

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | None = None,
    ) -> None:
        if self._closed or self.profiler is None:
            return
        self.profiler.step()
        if not self.by_epoch and runner.iter + 1 >= self.profile_times:
            self._export_chrome_trace(runner)

    def after_train_epoch(self, runner: Any) -> None:
        if not self._closed and self.profiler is not None:
            self._export_chrome_trace(runner)

    def after_run(self, runner: Any) -> None:
        # A run that ended before the profiled span did (early stopping, test only) still
        # closes the profiler and writes what it recorded.
        if not self._closed and self.profiler is not None:
            self._export_chrome_trace(runner)

    def _export_chrome_trace(self, runner: Any) -> None:
        """Stop profiling and write what was recorded: the Chrome trace to
        ``json_trace_path`` (when set), and the ``on_trace_ready`` output as the profiler
        closes. Called once, when the profiled span ends (MMEngine's name: subclasses and
        tests call it)."""
        self._closed = True
        runner.logger.info("ProfilerHook: writing the profile (this may take a while)")
        self.profiler.__exit__(None, None, None)
        if self.json_trace_path is not None:
            path = _per_rank(self.json_trace_path)
            directory = osp.dirname(path)
            if directory:
                os.makedirs(directory, exist_ok=True)
            self.profiler.export_chrome_trace(path)
            runner.logger.info(f"ProfilerHook: Chrome trace written to {path}")
