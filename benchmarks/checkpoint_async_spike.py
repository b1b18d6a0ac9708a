"""The step-time spike of a checkpoint save, synchronous against asynchronous, in one run.

A model of ~256 MiB of parameters (four Linear(4096, 4096) layers, plain SGD: the checkpoint is
~256 MiB) trains on the CPU with a small batch, so that a step is short next to a save, through
treadle's Runner with ``CheckpointHook(interval=K, by_epoch=False)``: once
without checkpoints (the normal step), once with ``async_save=False`` and once with
``async_save=True``, the three alternating (a busy spell of the machine falls on all). A step
is timed from one ``before_train_iter`` to the next, so it holds the save done in the hook after
it (synchronous) and the wait for the background copy in the next optimizer step
(asynchronous). A save's period runs from the step that saves to the step before the next save:
it holds everything the save costs, the background copy and the whole write included, wherever
it falls. Printed per mode: the slowest step of each period against the normal step (the
median step of the runs without checkpoints), as the median over the saves and the worst; the
first save of each run is reported apart (its host buffers are new: made ready after the first
optimizer step, by a thread at the lowest priority). The runs without checkpoints are cut into
periods the same way: their line is the machine's own noise, the floor the other two lines
stand on. Each line gives the median, the 90th percentile and the worst, and how many periods
went over 1.5x. A second measure keeps only the steps while an asynchronous save is under way
(the issue's goal: from the step that saves to the step in which its background write is
over), against the same number of steps of each period without checkpoints. Then how long
the background writes took and how long optimizer steps waited for the background copy. Each
run starts after ``os.sync()``, so that no run's dirty pages are written
back during the next. Every checkpoint is kept, as MMEngine's default ``max_keep_ckpts=-1``
does, so that the disk gets every byte (a checkpoint deleted within seconds never reaches it);
``--keep 2`` keeps two. A run's checkpoints are deleted once it is over.

    hatch run python benchmarks/checkpoint_async_spike.py [--steps 60] [--every 10] [--rounds 2]
        [--keep -1]
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
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


class Phases:
    """How long the background writes took, and how long optimizer steps waited for the
    background copy (wrapping the two functions, for this benchmark only)."""

    def __init__(self) -> None:
        self.writes: list[float] = []
        self.ends: list[float] = []  # when each background write was over (host clock)
        self.waits: list[float] = []
        write = checkpoint_io.save_checkpoint
        before_step = AsyncCheckpointWriter._before_step

        def timed_write(*args: Any, **kwargs: Any) -> None:
            started = time.perf_counter()
            write(*args, **kwargs)
            if threading.current_thread().name.startswith("treadle-checkpoint"):
                self.ends.append(time.perf_counter())  # an asynchronous one
                self.writes.append(self.ends[-1] - started)

        def timed_wait(writer: Any, *args: Any) -> None:
            started = time.perf_counter()
            before_step(writer, *args)
            self.waits.append(time.perf_counter() - started)

        checkpoint_io.save_checkpoint = timed_write
        AsyncCheckpointWriter._before_step = timed_wait  # type: ignore[method-assign]

    def waited(self) -> list[float]:
        return [w for w in self.waits if w > 1e-3]  # the steps that found the copy under way


def train(work_dir: str, steps: int, every: int, mode: str, keep: int) -> list[float]:
    """When each step of one run began (and the last ended); ``mode``: 'none' (no
    checkpoint), 'sync' or 'async'."""
    clock = StepClock()
    checkpoint = dict(
        type="CheckpointHook",
        interval=every if mode != "none" else steps + 1,
        by_epoch=False,
        max_keep_ckpts=keep,
        save_last=False,
        async_save=mode == "async",
    )
    runner = Runner(
        model=BigLinear(),
        work_dir=work_dir,
        experiment_name=f"spike_{mode}_{time.monotonic_ns()}",
        train_dataloader=dict(
            dataset=Noise(BATCH * 8),
            sampler=dict(type="InfiniteSampler", shuffle=False),
            batch_size=BATCH,
            num_workers=0,
        ),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=1e-6)),
        train_cfg=dict(by_epoch=False, max_iters=steps),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=1000), checkpoint=checkpoint),
        custom_hooks=[clock],
        log_level="WARNING",
    )
    runner.train()
    return clock.starts


def step_times(starts: list[float]) -> list[float]:
    return [end - start for start, end in itertools.pairwise(starts)]


def periods(times: list[float], every: int) -> tuple[float, list[float]]:
    """(the slowest step of the first save's period, that of each later save's period). Step i
    (0-based) ends with iteration i + 1, so the save of iteration n runs in step n - 1; its
    period is that step and those after it, up to the step before the next save."""
    firsts, later = [], []
    for start in range(every - 1, len(times), every):
        slowest = max(times[start : start + every])
        (later if firsts else firsts).append(slowest)
    return firsts[0], later


def under_way(starts: list[float], every: int, ends: list[float]) -> list[tuple[int, float]]:
    """For each save after the first: (how many steps, the slowest of them) from the step that
    saved to the step in which its background write was over (``ends``, in the saves' order)."""
    times = step_times(starts)
    windows = []
    for number, start in enumerate(range(every - 1, len(times), every)):
        if number == 0 or number >= len(ends):
            continue
        last = start
        while last + 1 < len(times) and starts[last + 1] < ends[number]:
            last += 1
        windows.append((last - start + 1, max(times[start : last + 1])))
    return windows


def spread(values: list[float], normal: float) -> str:
    """Median, 90th percentile and worst of ``values`` as multiples of ``normal``, and how many
    exceed 1.5x."""
    ordered = sorted(value / normal for value in values)
    tenth = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    over = sum(value > 1.5 for value in ordered)
    return (
        f"median {ordered[len(ordered) // 2]:4.2f}x, 90th percentile {tenth:4.2f}x, "
        f"worst {ordered[-1]:4.2f}x, over 1.5x in {over} of {len(ordered)}"
    )


MODES = ("none", "sync", "async")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--keep", type=int, default=-1, help="max_keep_ckpts (-1: all)")
    args = parser.parse_args()
    print(
        f"{LAYERS} x Linear({WIDTH}, {WIDTH}): "
        f"{LAYERS * (WIDTH * WIDTH + WIDTH) * 4 / 2**20:.0f} MiB of parameters; batch {BATCH}, "
        f"{args.steps} steps, a checkpoint every {args.every}, max_keep_ckpts={args.keep}; "
        "torch threads "
        f"{torch.get_num_threads()}, {os.cpu_count()} CPUs"
    )
    slowest: dict[str, list[float]] = {mode: [] for mode in MODES}
    firsts: dict[str, list[float]] = {mode: [] for mode in MODES}
    plain: list[float] = []
    plain_runs: list[list[float]] = []  # each run's step times
    windows: list[tuple[int, float]] = []
    phases = Phases()
    with tempfile.TemporaryDirectory() as root:
        for round_number in range(args.rounds):
            for mode in MODES:
                work_dir = os.path.join(root, f"{mode}_{round_number}")
                # The runs before left dirty pages (their checkpoints): written back to the disk
                # now, not by the kernel in the middle of this run's steps.
                os.sync()
                ends_before = len(phases.ends)
                starts = train(work_dir, args.steps, args.every, mode, args.keep)
                shutil.rmtree(work_dir)
                times = step_times(starts)
                first, later = periods(times, args.every)
                firsts[mode].append(first)
                slowest[mode].extend(later)
                if mode == "none":
                    plain.extend(times[args.every :])
                    plain_runs.append(times)
                if mode == "async":
                    windows.extend(under_way(starts, args.every, phases.ends[ends_before:]))
    normal = statistics.median(plain)
    print(f"normal step (no checkpoints): {normal * 1e3:.1f} ms")
    print("the slowest step of each save's whole period (from the step that saves to the next):")
    for mode in MODES:
        label = "no save" if mode == "none" else mode
        print(
            f"  {label:>7}: {spread(slowest[mode], normal)}; "
            f"first save {max(firsts[mode]) / normal:4.2f}x"
        )
    # While the save is under way: from its step to the end of its write. The runs without
    # checkpoints, cut the same way (as many steps from each period's start), are the floor.
    length = round(statistics.median(count for count, _ in windows)) if windows else 1
    floor = []
    for times in plain_runs:
        floor.extend(
            max(times[start : start + length])
            for start in range(2 * args.every - 1, len(times), args.every)
        )
    print(
        "the slowest step while an asynchronous save is under way (from its step to the end of "
        f"its write: {length} steps in the median):"
    )
    print(f"    async: {spread([slowest for _, slowest in windows] or [0.0], normal)}")
    print(f"  no save: {spread(floor, normal)} (the first {length} steps of each period)")
    waited, writes = phases.waited(), phases.writes or [0.0]
    print(
        f"async: background writes took {statistics.median(writes):.2f} s (median of "
        f"{len(phases.writes)}); {len(waited)} optimizer steps waited for the copy, "
        f"median {statistics.median(waited or [0.0]) * 1e3:.0f} ms, "
        f"longest {max(waited or [0.0]) * 1e3:.0f} ms (the first save's included)"
    )


if __name__ == "__main__":
    main()
