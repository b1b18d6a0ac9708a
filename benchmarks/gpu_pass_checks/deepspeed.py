"""Check 5: DeepSpeed ZeRO-2 in one process through FlexibleRunner and DeepSpeedStrategy (which
starts its own process group of one), saved at iteration 5 as a DeepSpeed checkpoint directory
and resumed in a fresh runner: the same losses and final weights, bit for bit.

On CUDA the engine trains in fp16 with DeepSpeed's dynamic loss scale. On the CPU the check
is skipped unless asked for (``gpu_pass.py --deepspeed-on-cpu``): DeepSpeed's CPU accelerator
JIT-builds a C++ op (shm comm) when its process group starts, minutes on 2 busy cores, and a
build killed half-way leaves a lock that makes the next one wait forever; the CPU engine is
tested by tests/runner/test_strategies_deepspeed_gloo.py. Asked for, it trains in bf16 (that
accelerator has no fp16). Where deepspeed is not installed the check is skipped: carry its
wheel with the working tree (``gpu_pass.py --wheels DIR``).
"""

from __future__ import annotations

import importlib.util
import os
from functools import partial
from pathlib import Path
from typing import Any

from gpu_pass_checks.rows import Row, skipped, verdict

# Set by gpu_pass.py --deepspeed-on-cpu for the checks' subprocesses.
ON_CPU_VARIABLE = "TREADLE_GPU_PASS_DEEPSPEED_ON_CPU"
NOT_ON_CPU = (
    "CPU mode: DeepSpeed's CPU accelerator JIT-builds its shm comm op (minutes); "
    "--deepspeed-on-cpu runs it (bf16)"
)
NOT_INSTALLED = (
    "deepspeed is not installed here: build its wheels with "
    "`pip wheel --no-deps -w gpu_wheels deepspeed==0.19.8 hjson ninja py-cpuinfo msgpack einops` "
    "and run gpu_pass.py --wheels gpu_wheels"
)


def deepspeed_cfg(work_dir: Path, device: str, **overrides: Any) -> dict:
    from gpu_pass_checks.toys import dropout_cfg

    precision = (
        dict(fp16=dict(enabled=True, loss_scale=0, initial_scale_power=16))
        if device == "cuda"
        else dict(bf16=dict(enabled=True))
    )
    return dropout_cfg(
        work_dir,
        device,
        dropout=0.0,
        strategy=dict(
            type="DeepSpeedStrategy",
            zero_optimization=dict(stage=2),
            inputs_to_half=["inputs"],
            **precision,
        ),
        optim_wrapper=dict(type="DeepSpeedOptimWrapper", optimizer=dict(type="AdamW", lr=0.01)),
        **overrides,
    )


def run(device: str, work_dir: Path) -> list[Row]:
    check = "deepspeed: ZeRO-2 " + ("fp16" if device == "cuda" else "bf16 (CPU)") + " resume"
    if device == "cpu" and os.environ.get(ON_CPU_VARIABLE) != "1":
        return [skipped(check, NOT_ON_CPU)]
    if importlib.util.find_spec("deepspeed") is None:
        return [skipped(check, NOT_INSTALLED)]
    try:
        import deepspeed  # noqa: F401  (its own imports may be missing: --no-deps wheels)
    except ImportError as error:
        return [skipped(check, f"import deepspeed failed: {error}; {NOT_INSTALLED}")]
    from gpu_pass_checks.runs import resume_delta
    from treadle.runner.runner import FlexibleRunner

    delta = resume_delta(FlexibleRunner, partial(deepspeed_cfg, device=device), work_dir)
    engine = delta.runner.strategy.engine
    stage = engine.zero_optimization_stage()
    half = engine.fp16_enabled() if device == "cuda" else engine.bfloat16_enabled()
    saved = work_dir / "full" / "iter_5.pth"
    return [
        verdict(
            check,
            delta.exact and stage == 2 and half and saved.is_dir(),
            delta.figure(),
            f"ZeRO stage {stage}, reduced precision on: {half}, checkpoint a directory: "
            f"{saved.is_dir()}, resumed from iteration {delta.first_resumed_iter}"
            + ("" if delta.exact else ": not bit-exact"),
        )
    ]
