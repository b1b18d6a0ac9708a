"""What treadle's Runner adds to a DDP training step, against plain DDP code in the same run.

Two processes on 127.0.0.1 form a gloo group (the script starts them: it runs itself again as
2 workers). In each, the same MLP (benchmarks/mlp.py: 256 -> 512 x3 -> 10, batch 64 per rank),
the same ready-made batches and the same SGD are trained by:

- plain:   ``DistributedDataParallel(model)``, then
           ``for batch in loader: loss = ...; loss.backward(); opt.step(); opt.zero_grad()``
- treadle: ``treadle.runner.Runner(launcher='pytorch')`` (DDPStrategy's wrapper,
           MMDistributedDataParallel; default hooks on, LoggerHook interval 50)

Both sides share the one process group. They run in two threads of each process that take
turns, one epoch each (the turn passes at the start of an epoch, in the same order on both
ranks, so that the collectives of the two sides never interleave); a busy spell of the machine
falls on both alike. An epoch is timed from a barrier at its start to its end; the first epoch
of each side is warm-up. The first quartile of the epoch times over the step count is the time
per step (rank 0's, the ranks wait for each other at every all-reduce); the ratio treadle/plain
is printed, with the target 1.03x; so are the median of the epoch-by-epoch ratios (each
treadle epoch against the plain epochs just before and after it) and the ratio of CPU time
(the process's, over the same epochs), which a machine busy with other work disturbs less
than the wall clock.

    python benchmarks/runner_ddp_overhead.py [--epochs 21] [--steps 50] [--check]
"""

from __future__ import annotations

import argparse
import functools
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from typing import Any

# One intra-op thread per process (two processes share the cores); set before torch starts.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

WORLD_SIZE = 2
BATCH_SIZE = 64
LR, MOMENTUM = 0.01, 0.9
LOG_INTERVAL = 50
TARGET = 1.03


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def worker(epochs: int, steps: int) -> None:
    import torch
    from mlp import make_batch, make_mlp
    from runner_step_overhead import Baton, EpochClock, make_loader, quartile, take_turns
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel

    import treadle.dist as dist

    dist.init_dist("pytorch", backend="gloo")
    rank = dist.get_rank()
    torch.set_num_threads(1)

    class RankBatches(torch.utils.data.Dataset):
        """``steps`` batches of this rank (each rank its own data, as a sampler would give)."""

        def __init__(self) -> None:
            self.batches = []
            for index in range(steps):
                inputs, targets = make_batch(BATCH_SIZE, seed=1000 * rank + index)
                self.batches.append({"inputs": inputs, "targets": targets})

        def __len__(self) -> int:
            return len(self.batches)

        def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
            return self.batches[index]

    class BarrierClock(EpochClock):
        """Wall-clock and CPU time of each epoch; the epoch starts at a barrier."""

        def __init__(self, name: str, baton: Baton) -> None:
            super().__init__(name, baton)
            self.cpu: list[float] = []
            self._cpu_start = 0.0

        def start(self) -> None:
            self.baton.pass_and_wait(self.name)
            dist.barrier()  # both ranks start the epoch together
            self._cpu_start = time.process_time()
            self._start = time.perf_counter()

        def end(self, device: str) -> None:
            super().end(device)
            # The whole process's CPU time (gloo's threads too): only this side runs now.
            self.cpu.append(time.process_time() - self._cpu_start)

    def run_plain(clock: EpochClock, work_dir: str) -> None:
        model = DistributedDataParallel(make_mlp())
        optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
        loader = make_loader(RankBatches())
        for _ in range(epochs):
            clock.start()
            model.train()
            for batch in loader:
                loss = nn.functional.cross_entropy(model(batch["inputs"]), batch["targets"])
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
            clock.end("cpu")

    def run_treadle(clock: EpochClock, work_dir: str) -> None:
        from treadle.runner.hooks import Hook
        from treadle.runner.model import BaseModel
        from treadle.runner.runner import Runner

        class MLP(BaseModel):
            def __init__(self) -> None:
                super().__init__()
                self.net = make_mlp()

            def forward(self, inputs: Any, targets: Any, mode: str = "tensor") -> Any:
                logits = self.net(inputs)
                if mode == "loss":
                    return {"loss": nn.functional.cross_entropy(logits, targets)}
                return logits

        class StartClock(Hook):
            priority = "LOWEST"

            def before_train_epoch(self, runner: Any) -> None:
                clock.start()

        class StopClock(Hook):
            priority = "HIGHEST"

            def after_train_epoch(self, runner: Any) -> None:
                clock.end("cpu")

        runner = Runner(
            model=MLP(),
            work_dir=os.path.join(work_dir, "treadle"),
            train_dataloader=make_loader(RankBatches()),
            train_cfg=dict(by_epoch=True, max_epochs=epochs),
            optim_wrapper=dict(optimizer=dict(type="SGD", lr=LR, momentum=MOMENTUM)),
            default_hooks=dict(
                logger=dict(type="LoggerHook", interval=LOG_INTERVAL),
                # Saved at the end of the last epoch only: writing is not the step's cost.
                checkpoint=dict(type="CheckpointHook", interval=epochs),
            ),
            custom_hooks=[StartClock(), StopClock()],
            launcher="pytorch",
            env_cfg=dict(dist_cfg=dict(backend="gloo")),
            experiment_name=f"bench-ddp-{uuid.uuid4().hex[:8]}",
        )
        runner.train()

    sides = {"plain": run_plain, "treadle": run_treadle}
    baton = Baton(list(sides))
    clocks = {name: BarrierClock(name, baton) for name in sides}
    with tempfile.TemporaryDirectory(prefix="treadle-bench-ddp-") as work_dir:

        def run(name: str) -> None:
            torch.set_num_threads(1)
            sides[name](clocks[name], work_dir)

        errors = take_turns(baton, {name: functools.partial(run, name) for name in sides})

    for name, error in errors.items():
        print(f"rank {rank}: {name} failed: {type(error).__name__}: {error}", file=sys.stderr)
    per_step = {
        name: quartile(clock.epochs[1:]) / steps
        for name, clock in clocks.items()
        if name not in errors and len(clock.epochs) > 1
    }
    cpu_per_step = {
        name: quartile(clock.cpu[1:]) / steps
        for name, clock in clocks.items()
        if name not in errors and len(clock.cpu) > 1
    }
    dist.barrier()
    if rank == 0 and len(per_step) == len(sides):
        ratio = per_step["treadle"] / per_step["plain"]
        cpu_ratio = cpu_per_step["treadle"] / cpu_per_step["plain"]
        # Treadle's epoch i ran between plain's epochs i and i+1: its ratio to their mean is
        # the least disturbed by a load that changes slowly (and by which side goes first);
        # the median of those ratios is the second estimate.
        plain_epochs, treadle_epochs = clocks["plain"].epochs, clocks["treadle"].epochs
        paired = statistics.median(
            treadle_epochs[i] / ((plain_epochs[i] + plain_epochs[i + 1]) / 2)
            for i in range(1, min(len(treadle_epochs), len(plain_epochs) - 1))
        )
        table = (
            f"torch {torch.__version__}, gloo, {WORLD_SIZE} processes on 127.0.0.1, 1 thread each; "
            f"MLP 256->512x3->10, batch {BATCH_SIZE} per rank, {steps} steps/epoch, "
            f"{epochs - 1} timed epochs per side\n"
            f"                wall clock               CPU time of rank 0\n"
            f"  plain DDP  {per_step['plain'] * 1e6:9.1f} us/step          "
            f"{cpu_per_step['plain'] * 1e6:9.1f} us/step\n"
            f"  treadle    {per_step['treadle'] * 1e6:9.1f} us/step  {ratio:6.3f}x  "
            f"{cpu_per_step['treadle'] * 1e6:9.1f} us/step  {cpu_ratio:6.3f}x\n"
            f"  median of the epoch-by-epoch ratios (wall clock): {paired:.3f}x\n"
            f"  target {TARGET:.2f}x (wall clock): {'ok' if ratio <= TARGET else 'OVER'}"
        )
        with open(os.environ["BENCH_RESULT"], "w") as file:
            file.write(f"{ratio}\n{table}\n")
    import torch.distributed

    torch.distributed.destroy_process_group()
    if errors:
        raise SystemExit(1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=21, help="epochs per side, 1 warm-up")
    parser.add_argument("--steps", type=int, default=50, help="steps per epoch")
    parser.add_argument("--check", action="store_true", help=f"exit 1 above {TARGET}x")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.epochs, args.steps)
        return 0

    here = os.path.dirname(os.path.abspath(__file__))
    port = str(free_port())
    command = [sys.executable, __file__, "--worker", f"--epochs={args.epochs}"]
    command.append(f"--steps={args.steps}")
    with tempfile.TemporaryDirectory(prefix="treadle-bench-ddp-") as scratch:
        result = os.path.join(scratch, "ratio")
        processes, logs = [], []
        for rank in range(WORLD_SIZE):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
            env.update(RANK=str(rank), WORLD_SIZE=str(WORLD_SIZE), LOCAL_RANK=str(rank))
            env.update(BENCH_RESULT=result)
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
            # The Runner's log lines are kept in a file, shown only on failure.
            logs.append(open(os.path.join(scratch, f"rank{rank}.log"), "w+"))  # noqa: SIM115
            processes.append(
                subprocess.Popen(command, env=env, stdout=logs[-1], stderr=subprocess.STDOUT)
            )
        status = max(process.wait() for process in processes)
        text = ""
        if os.path.exists(result):
            with open(result) as file:
                text = file.read().strip()
        if status or not text:
            for rank, log in enumerate(logs):
                log.seek(0)
                print(f"--- rank {rank} output (end) ---", file=sys.stderr)
                print(log.read()[-4000:], file=sys.stderr)
        for log in logs:
            log.close()
    if status or not text:
        return status or 1
    ratio, table = text.split("\n", 1)
    print(table)
    return 1 if args.check and float(ratio) > TARGET else 0


if __name__ == "__main__":
    sys.exit(main())
