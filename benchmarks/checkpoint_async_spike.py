"""The step-time spike of a checkpoint save, synchronous against asynchronous, in one run.

A model of ~256 MiB of parameters (four Linear(4096, 4096) layers, plain SGD: the checkpoint is
~256 MiB) trains on the CPU with a small batch, so that a step is short next to a save, through
treadle's Runner with ``CheckpointHook(interval=K, by_epoch=False, max_keep_ckpts=2)``, once
with ``async_save=False`` and once with ``async_save=True``, the two alternating (a busy spell
of the machine falls on both). A step is timed from one ``before_train_iter`` to the next, so
it holds the save done in the hook after it (synchronous) and the wait for the background copy
in the next optimizer step (asynchronous). Printed per mode: the normal step (the median of
the steps far from a save), the slowest step from a save to the next, and their ratio (the
goal for the asynchronous save: at most 1.5x), as the median over the saves and the worst;
then how long the background writes took and how long optimizer steps waited for the
background copy.

    hatch run python benchmarks/checkpoint_async_spike.py [--steps 60] [--every 10] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import threading
import time
from typing import Any

import torch
from torch import nn
from torch.utils.data import Dataset

from treadle.runner.checkpoint.async_writer import AsyncCheckpointWriter
from treadle.runner.hooks import Hook
from treadle.runner.model import BaseModel
from treadle.runner.runner import Runner
from treadle.runner.strategies import checkpoint_io

WIDTH = 4096
LAYERS = 4
BATCH = 4


class BigLinear(BaseModel):
    """LAYERS x Linear(WIDTH, WIDTH): 4 * 64 MiB of float32 parameters."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.Sequential(*(nn.Linear(WIDTH, WIDTH) for _ in range(LAYERS)))

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        inputs = torch.stack(inputs) if isinstance(inputs, list) else inputs
        out = self.layers(inputs)
        if mode == "loss":
            return {"loss": out.pow(2).mean()}
        return out


class Noise(Dataset):
    def __init__(self, length: int) -> None:
        self.data = torch.randn(length, WIDTH)

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int) -> dict:
        return {"inputs": self.data[index]}


class StepClock(Hook):
    """Host-clock time of each step, from one ``before_train_iter`` to the next."""

    priority = "VERY_HIGH"

    def __init__(self) -> None:
        self.starts: list[float] = []

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        self.starts.append(time.perf_counter())

    def after_train(self, runner: Any) -> None:
        self.starts.append(time.perf_counter())  # the last step ends with train()

    def steps(self) -> list[float]:
        return [b - a for a, b in zip(self.starts, self.starts[1:], strict=False)]


class Phases:
    """How long the background writes took, and how long optimizer steps waited for the
    background copy (wrapping the two functions, for this benchmark only)."""

    def __init__(self) -> None:
        self.writes: list[float] = []
        self.waits: list[float] = []
        write = checkpoint_io.save_checkpoint
        before_step = AsyncCheckpointWriter._before_step

        def timed_write(*args: Any, **kwargs: Any) -> None:
            started = time.perf_counter()
            write(*args, **kwargs)
            if threading.current_thread().name.startswith("treadle-checkpoint"):
                self.writes.append(time.perf_counter() - started)  # an asynchronous one

        def timed_wait(writer: Any, *args: Any) -> None:
            started = time.perf_counter()
            before_step(writer, *args)
            self.waits.append(time.perf_counter() - started)

        checkpoint_io.save_checkpoint = timed_write
        AsyncCheckpointWriter._before_step = timed_wait  # type: ignore[method-assign]

    def waited(self) -> list[float]:
        return [w for w in self.waits if w > 1e-3]  # the steps that found the copy under way


def train(work_dir: str, steps: int, every: int, async_save: bool) -> list[float]:
    clock = StepClock()
    runner = Runner(
        model=BigLinear(),
        work_dir=work_dir,
        experiment_name=f"spike_{async_save}_{time.monotonic_ns()}",
        train_dataloader=dict(
            dataset=Noise(BATCH * 8),
            sampler=dict(type="InfiniteSampler", shuffle=False),
            batch_size=BATCH,
            num_workers=0,
        ),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=1e-6)),
        train_cfg=dict(by_epoch=False, max_iters=steps),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=1000),
            checkpoint=dict(
                type="CheckpointHook",
                interval=every,
                by_epoch=False,
                max_keep_ckpts=2,
                save_last=False,
                async_save=async_save,
            ),
        ),
        custom_hooks=[clock],
        log_level="WARNING",
    )
    runner.train()
    return clock.steps()


def summarize(times: list[float], every: int) -> tuple[float, list[float]]:
    """(normal step, the slowest step of each save's window). Step i (0-based) ends with
    iteration i + 1, so the save of iteration n runs in step n - 1; its window is that step and
    the two after it (the background copy, and the write, run beside them). The first `every`
    steps and the first save's window are warm-up (the first save also allocates the host
    buffers, whose pages the first copy faults in: reported apart); the steps outside every
    window are normal."""
    normal, windows = [], []
    for index, took in enumerate(times):
        if index < every + 2:
            continue
        since_save = (index + 1) % every  # 0: this step saves
        if since_save == 0:
            windows.append([took])
        elif since_save in (1, 2) and windows:
            windows[-1].append(took)
        elif since_save not in (1, 2):
            normal.append(took)
    return statistics.median(normal), [max(window) for window in windows]


def first_save(times: list[float], every: int) -> float:
    """The slowest step of the first save's window."""
    return max(times[every - 1 : every + 2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    print(
        f"{LAYERS} x Linear({WIDTH}, {WIDTH}): "
        f"{LAYERS * (WIDTH * WIDTH + WIDTH) * 4 / 2**20:.0f} MiB of parameters; batch {BATCH}, "
        f"{args.steps} steps, a checkpoint every {args.every}; torch threads "
        f"{torch.get_num_threads()}, {os.cpu_count()} CPUs"
    )
    results: dict[bool, tuple[list[float], list[float]]] = {False: ([], []), True: ([], [])}
    firsts: dict[bool, list[float]] = {False: [], True: []}
    phases = Phases()
    with tempfile.TemporaryDirectory() as root:
        for round_number in range(args.rounds):
            for async_save in (False, True):
                work_dir = os.path.join(root, f"{async_save}_{round_number}")
                times = train(work_dir, args.steps, args.every, async_save)
                normal, slowest = summarize(times, args.every)
                results[async_save][0].append(normal)
                results[async_save][1].extend(slowest)
                firsts[async_save].append(first_save(times, args.every))
    for async_save, (normals, slowest) in results.items():
        normal = statistics.median(normals)
        typical, worst = statistics.median(slowest), max(slowest)
        mode = "async" if async_save else "sync "
        print(
            f"{mode}: normal step {normal * 1e3:7.1f} ms; slowest step of a save's window: "
            f"median {typical * 1e3:7.1f} ms ({typical / normal:4.2f}x), worst "
            f"{worst * 1e3:7.1f} ms ({worst / normal:4.2f}x) over {len(slowest)} saves; "
            f"first save {max(firsts[async_save]) / normal:4.2f}x"
        )
    waited, writes = phases.waited(), phases.writes or [0.0]
    print(
        f"async: background writes took {statistics.median(writes):.2f} s (median of "
        f"{len(phases.writes)}); {len(waited)} optimizer steps waited for the copy, "
        f"median {statistics.median(waited or [0.0]) * 1e3:.0f} ms, "
        f"longest {max(waited or [0.0]) * 1e3:.0f} ms (the first save's included)"
    )


if __name__ == "__main__":
    main()
