"""The checks of the GPU verification pass (benchmarks/gpu_pass.py), one module each.

Each module has ``run(device, work_dir) -> list[Row]``: ``device`` is 'cuda' or 'cpu' (the CPU
analogue of the check, or rows skipped with the reason where it has none). The script runs each
in a subprocess of its own; the tests (tests/runner/test_gpu_pass_*.py) run the same code.

The checks reuse the test suite's toys (tests/support) and the step benchmark
(benchmarks/runner_step_overhead.py): :func:`use_repo_paths` puts both folders on ``sys.path``.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1]
REPO = BENCHMARKS.parent
SUPPORT = REPO / "tests" / "support"
EXAMPLES = REPO / "examples"


@dataclass(frozen=True)
class Check:
    """One check: its module in this package and how long it may take on each device."""

    name: str
    what: str
    cuda_limit_s: int
    cpu_limit_s: int

    @property
    def module(self) -> str:
        return f"gpu_pass_checks.{self.name}"


# Cheap checks first: when the pass runs out of time, what is left is the expensive ones.
CHECKS: dict[str, Check] = {
    check.name: check
    for check in (
        Check("preprocessor", "a batch on the device is not copied; pinned, non-blocking", 60, 60),
        Check("resume", "exact resume on the device (dropout on the device's generator)", 90, 90),
        Check("host_sync", "no host-device sync on the step path", 90, 60),
        Check("amp", "fp16 with dynamic loss scale, bf16 without scaler", 120, 120),
        Check("overhead", "per-step overhead against plain PyTorch", 120, 90),
        Check("input_path", "batches copied on a side stream vs a naive synchronous copy", 90, 60),
        Check("fsdp", "FSDP2, one process: bf16, checkpointing, compile; resume", 180, 120),
        Check("deepspeed", "DeepSpeed ZeRO-2, one process: fp16; resume", 180, 120),
    )
}


def treadle_installed() -> bool:
    try:
        return importlib.util.find_spec("treadle.runner") is not None
    except ImportError:  # no treadle namespace at all
        return False


def use_repo_paths() -> None:
    """Put tests/support (the test toys) and benchmarks/ (the benchmark helpers) on sys.path,
    and the packages' source folders where treadle is not installed (a GPU machine that has
    only the working tree: its namespace packages import from there)."""
    folders = [SUPPORT, BENCHMARKS]
    if not treadle_installed():
        folders += sorted((REPO / "packages").glob("*/src"))
    for folder in folders:
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
