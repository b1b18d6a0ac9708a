"""``NPUProfilerHook``: profiles iterations on Ascend NPUs with torch_npu's profiler."""

from __future__ import annotations

import os
import sys
from typing import Any

from treadle.dist import get_rank

from ..device.availability import is_npu_available
from ..device.vendors import import_vendor
from ..registry import HOOKS
from .hook import DATA_BATCH, Hook


@HOOKS.register_module()
class NPUProfilerHook(Hook):
    """Profiles training iterations ``begin`` to ``end - 1`` on an Ascend NPU with
    ``torch_npu.npu.profile`` (CANN profiling), writing to ``result_path``, on rank 0.

    It needs torch_npu and an NPU: building it elsewhere raises a RuntimeError saying so.

    Args:
        begin: the first profiled iteration.
        end: one past the last profiled iteration.
        result_path: the directory the CANN profile is written to.
        exit_after_profiling: end the program once the profile is written.
        use_e2e_profiler: torch_npu's end-to-end profiler.
        ge_profiling_to_std_out: print graph-engine profiling to stdout.

    Example:
        >>> runner_cfg = dict(custom_hooks=[dict(type='NPUProfilerHook', begin=10, end=20)])
    """

    priority = "VERY_LOW"

    def __init__(
        self,
        *,
        begin: int = 0,
        end: int = 1,
        result_path: str = "cann_profiling",
        exit_after_profiling: bool = True,
        use_e2e_profiler: bool = False,
        ge_profiling_to_std_out: bool = False,
    ) -> None:
        torch_npu = import_vendor("torch_npu")
        if torch_npu is None or not is_npu_available():
            raise RuntimeError(
                "NPUProfilerHook profiles Ascend NPUs and needs torch_npu "
                "(pip install torch-npu) and an NPU; neither is available here. "
                "Use ProfilerHook on CPU and CUDA"
            )
        if begin >= end:
            raise ValueError(f"NPUProfilerHook: begin ({begin}) must be before end ({end})")
        self.begin = begin
        self.end = end
        self.result_path = result_path
        self.exit_after_profiling = exit_after_profiling
        if ge_profiling_to_std_out:
            os.environ["GE_PROFILING_TO_STD_OUT"] = "1"
        os.makedirs(result_path, exist_ok=True)
        self.profiler = torch_npu.npu.profile(result_path, use_e2e_profiler=use_e2e_profiler)

    def before_run(self, runner: Any) -> None:
        if get_rank() == 0 and self.end > runner.max_iters:
            raise ValueError(
                f"NPUProfilerHook: end={self.end} is after the run's last iteration "
                f"(max_iters={runner.max_iters})"
            )

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: DATA_BATCH = None) -> None:
        if get_rank() == 0 and runner.iter == self.begin:
            self.profiler.__enter__()
            runner.logger.info("NPUProfilerHook: profiling...")

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | None = None,
    ) -> None:
        if get_rank() == 0 and runner.iter == self.end - 1:
            runner.logger.info("NPUProfilerHook: writing the profile (this may take a while)")
            self.profiler.__exit__(None, None, None)
            if self.exit_after_profiling:
                sys.exit()
