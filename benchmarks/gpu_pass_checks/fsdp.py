"""Check 4: FSDP2 in one process (a process group of world size 1: nccl on CUDA, gloo on the
CPU) through FlexibleRunner and FSDPStrategy, with everything a large model turns on at once:
bf16 parameters with fp32 gradient reduction, activation checkpointing of every Linear, and
``torch.compile``. Its sharded checkpoint (a torch.distributed.checkpoint directory) is saved at
iteration 5 and resumed in a fresh runner: the same losses and final weights, bit for bit.

On the CPU, torch.compile uses the ``aot_eager`` backend (Dynamo and AOTAutograd, eager kernels):
inductor's C++ code generation takes minutes on a small CPU, and the kernels are not what the
check is about.
"""

from __future__ import annotations

import os
import socket
from functools import partial
from pathlib import Path
from typing import Any

from gpu_pass_checks.rows import Row, verdict


def start_group(device: str) -> None:
    """A process group of this process alone, as torchrun would start it."""
    from treadle import dist

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    os.environ.update(
        RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)
    )
    dist.init_dist("pytorch", backend="nccl" if device == "cuda" else "gloo")


def fsdp_cfg(work_dir: Path, device: str, **overrides: Any) -> dict:
    from gpu_pass_checks.toys import dropout_cfg

    strategy = dict(
        type="FSDPStrategy",
        model_wrapper=dict(
            auto_wrap_policy=["Linear"],
            mixed_precision=dict(param_dtype="bfloat16", reduce_dtype="float32"),
        ),
        activation_checkpointing=dict(module_classes=["Linear"]),
    )
    return dropout_cfg(
        work_dir,
        device,
        dropout=0.0,
        strategy=strategy,
        launcher="pytorch",
        compile=True if device == "cuda" else dict(backend="aot_eager"),
        optim_wrapper=dict(type="OptimWrapper", optimizer=dict(type="AdamW", lr=0.01)),
        **overrides,
    )


def applied(runner: Any) -> dict[str, bool]:
    """Whether each of the run's settings is in force on its model."""
    import torch
    from torch.distributed.tensor import DTensor

    from treadle.runner.model.wrappers.utils import unwrap_model
    from treadle.runner.strategies.activation_checkpointing import is_checkpointed

    inner = unwrap_model(runner.model)
    linears = [m for m in inner.modules() if isinstance(m, torch.nn.Linear)]
    return {
        "sharded": all(isinstance(p, DTensor) for p in inner.parameters()),
        "bf16": getattr(runner.model.mp_policy, "param_dtype", None) == torch.bfloat16,
        "checkpointed": bool(linears) and all(is_checkpointed(m) for m in linears),
        "compiled": bool(getattr(inner.forward, "__treadle_compiled__", False)),
    }


def run(device: str, work_dir: Path) -> list[Row]:
    from gpu_pass_checks.runs import resume_delta
    from treadle.runner.checkpoint.sharded_layout import is_sharded_checkpoint
    from treadle.runner.runner import FlexibleRunner

    start_group(device)
    delta = resume_delta(FlexibleRunner, partial(fsdp_cfg, device=device), work_dir)
    saved = work_dir / "full" / "iter_5.pth"
    files = sorted(os.listdir(saved)) if saved.is_dir() else []
    sharded = is_sharded_checkpoint(str(saved))
    compiled = "inductor" if device == "cuda" else "aot_eager"
    settings = applied(delta.runner)
    missing = [name for name, on in settings.items() if not on]
    return [
        verdict(
            "fsdp: FSDP2 settings in force",
            not missing,
            f"{len(settings) - len(missing)}/{len(settings)} on",
            f"not in force: {', '.join(missing)}",
            ", ".join(settings),
        ),
        verdict(
            "fsdp: sharded checkpoint",
            sharded and files == [".metadata", "__0_0.distcp"],
            f"{len(files)} files",
            f"iter_5.pth holds {files or 'no directory'}",
        ),
        verdict(
            "fsdp: bf16+ckpt+compile resume",
            delta.exact,
            delta.figure(),
            f"resumed from iteration {delta.first_resumed_iter}: not bit-exact over "
            f"{delta.iters_compared} iterations",
            f"compile backend {compiled}",
        ),
    ]
