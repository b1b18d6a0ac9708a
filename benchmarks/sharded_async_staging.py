"""What an asynchronous sharded (FSDP2 / torch.distributed.checkpoint) save costs the training
thread: staged before ``save`` returns (as before background staging; what a ShardedCheckpointIO
still does when nothing names the step-changed tensors) against staged in the background
(``strategy.write_checkpoint(..., async_save=True)``, which names them), and synchronous.

Two gloo ranks on the CPU train a model of ``--layers`` Linear(``--width``, ``--width``) layers
with AdamW (``--width 4096 --layers 4``: 256 MiB of parameters, 768 MiB with the optimizer's
state, half of it per rank) and save every ``--every`` steps to a temporary folder. Printed for
rank 0, per mode: the median time of ``save()`` on the training thread, the median and worst
step right after a save (it holds the wait for the background copy, and runs beside the
background write), the median step without a save, and how long the optimizer step after a
save waited for the background copy.

    hatch run python benchmarks/sharded_async_staging.py [--width 4096] [--layers 4]
        [--saves 3] [--every 4]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

MODES = ("staged before returning", "staged in the background", "synchronous")


def worker(args: argparse.Namespace) -> None:
    import torch
    from torch import nn

    from treadle import dist
    from treadle.runner.model import BaseModel
    from treadle.runner.strategies import FSDPStrategy

    dist.init_dist("pytorch", backend="gloo")
    torch.set_num_threads(1)

    class Wide(BaseModel):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.Sequential(
                *(nn.Linear(args.width, args.width) for _ in range(args.layers))
            )

        def forward(self, inputs, data_samples=None, mode="tensor"):
            return {"loss": self.layers(inputs).square().mean()}

    strategy = FSDPStrategy(model_wrapper=dict(auto_wrap_policy=["Linear"]))
    optim = dict(type="OptimWrapper", optimizer=dict(type="AdamW", lr=1e-4))
    model, wrapper = strategy.prepare(Wide(), optim_wrapper=optim)
    data = {"inputs": torch.randn(4, args.width)}
    out = tempfile.mkdtemp(prefix="sharded_staging_") if dist.get_rank() == 0 else None
    objects = [out]
    torch.distributed.broadcast_object_list(objects, src=0)
    out = objects[0]

    def step() -> float:
        started = time.perf_counter()
        model.train_step(data, wrapper)
        return time.perf_counter() - started

    step()  # the optimizer's state exists from here on
    # How long the step after a save waits for the background copy: from a step pre-hook
    # registered before the save's own (which waits) to one registered after it.
    entered: list[float] = []
    wrapper.optimizer.register_step_pre_hook(lambda *_: entered.append(time.perf_counter()))
    report = {}
    for mode in MODES:
        saves, after, normal, waited = [], [], [], []
        for index in range(args.saves):
            checkpoint = {
                "state_dict": strategy.model_state_dict(),
                "optimizer": strategy.optim_state_dict(),
                "meta": {"iter": index},
            }
            path = os.path.join(out, f"{mode.split()[-1]}_{index}.pth")
            started = time.perf_counter()
            if mode == MODES[0]:
                strategy.checkpoint_io.save(checkpoint, path, async_save=True)
            else:
                strategy.write_checkpoint(checkpoint, path, async_save=mode == MODES[1])
            saves.append(time.perf_counter() - started)
            del checkpoint
            handle = wrapper.optimizer.register_step_pre_hook(
                lambda *_, waited=waited: waited.append(time.perf_counter() - entered[-1])
            )
            after.append(step())
            handle.remove()
            normal.extend(step() for _ in range(args.every - 1))
        strategy.wait_for_checkpoint()
        report[mode] = (saves, after, normal, waited)
    strategy.checkpoint_io.close()
    torch.distributed.barrier()
    if dist.get_rank() == 0:
        shutil.rmtree(out, ignore_errors=True)
        size = sum(p.numel() * p.element_size() for p in model.parameters())  # DTensors: whole
        print(f"2 ranks, {size / 2**20:.0f} MiB of parameters (AdamW: 3x that saved)")
        for mode, (saves, after, normal, waited) in report.items():
            print(
                f"{mode:>26}: save() {statistics.median(saves) * 1000:7.1f} ms; step after it "
                f"median {statistics.median(after) * 1000:7.1f} ms, worst "
                f"{max(after) * 1000:7.1f} ms; normal step "
                f"{statistics.median(normal) * 1000:6.1f} ms; the step after waited "
                f"{statistics.median(waited) * 1000:6.1f} ms for the copy"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--saves", type=int, default=3)
    parser.add_argument("--every", type=int, default=4)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    processes = []
    for rank in range(2):
        env = dict(
            os.environ,
            RANK=str(rank),
            WORLD_SIZE="2",
            LOCAL_RANK=str(rank),
            LOCAL_WORLD_SIZE="2",
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
            CUDA_VISIBLE_DEVICES="",
        )
        command = [sys.executable, __file__, "--worker", *sys.argv[1:]]
        processes.append(subprocess.Popen(command, env=env))
    codes = [process.wait(timeout=1800) for process in processes]
    if any(codes):
        raise SystemExit(f"a rank failed: exit codes {codes}")


if __name__ == "__main__":
    main()
