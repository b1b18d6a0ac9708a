"""Check 1: exact resume on the device. A run of GpuPassDropoutModel (dropout draws from the
device's generator) is saved at iteration 5, mid-epoch, and resumed in a fresh Runner; its
losses and final weights must equal those of the run that never stopped, bit for bit (on CUDA
with deterministic algorithms: the figure says how far they are if not)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from gpu_pass_checks.rows import Row, verdict


def run(device: str, work_dir: Path) -> list[Row]:
    from gpu_pass_checks.runs import resume_delta
    from gpu_pass_checks.toys import dropout_cfg
    from treadle.runner.runner import Runner

    delta = resume_delta(Runner, partial(dropout_cfg, device=device), work_dir)
    return [
        verdict(
            "resume: losses and weights",
            delta.exact,
            delta.figure(),
            f"resumed from iteration {delta.first_resumed_iter}: not bit-exact over "
            f"{delta.iters_compared} iterations",
        )
    ]
