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
the background writes took and how long optimizer steps waited for the background copy. Each run
starts after ``os.sync()``, so that no run's dirty pages are written back during the next, and
after a garbage collection, so that the runs before (their runners hold reference cycles) are
not freed in the middle of its steps. On a virtual machine that hands freed memory back to its
host (free page reporting), each run also waits until the memory the run before freed has been
handed back. Every checkpoint is kept, as MMEngine's default ``max_keep_ckpts=-1`` does, so that
the disk gets every byte (a checkpoint deleted within seconds never reaches it); ``--keep 2``
keeps two. A run's checkpoints are deleted once it is over.

Other processes take the CPU from a step now and then: a step during which they took more
than a fifth of a CPU in user space (from /proc/stat, less this process's time) is marked
disturbed. The normal step is the median of the undisturbed steps without checkpoints, and each
measure is printed twice: over every period, and over the periods whose slowest step was not
disturbed. The machine's own noise still puts a step over 1.5x now and then without any save:
the last lines compare how often the periods went over 1.5x with asynchronous saves and
without, with a one-sided Fisher exact test (a small p says that the saves add such steps, a
large one that the counts cannot tell them from the noise). ``--modes none,async`` leaves the
synchronous runs out, so that long runs (``--rounds 20``) give more periods of the two in the
same time.

    hatch run python benchmarks/checkpoint_async_spike.py [--steps 60] [--every 10] [--rounds 2]
        [--keep -1] [--modes none,sync,async]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import math
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


def elsewhere_seconds() -> float | None:
    """User-space CPU time all other processes have taken since boot: the machine's (user and
    nice in /proc/stat) less this process's (None without /proc). Kernel time is left out:
    the kernel's threads and interrupts that write a checkpoint work for the save measured."""
    try:
        with open("/proc/stat") as stat:
            user, nice = (int(field) for field in stat.readline().split()[1:3])
        with open("/proc/self/stat") as own:
            mine = own.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (user + nice - int(mine[11])) / os.sysconf("SC_CLK_TCK")


class StepClock(Hook):
    """Host-clock time of each step, from one ``before_train_iter`` to the next, and the CPU
    time other processes took meanwhile."""

    priority = "VERY_HIGH"

    def __init__(self) -> None:
        self.starts: list[float] = []
        self.elsewhere: list[float | None] = []

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        self.mark()

    def after_train(self, runner: Any) -> None:
        self.mark()  # the last step ends with train()

    def mark(self) -> None:
        self.starts.append(time.perf_counter())
        self.elsewhere.append(elsewhere_seconds())

    def times(self) -> list[float]:
        return [end - start for start, end in itertools.pairwise(self.starts)]

    def disturbed(self) -> list[bool]:
        """Per step: whether other processes took more than ``_DISTURBED`` of one CPU (in
        user space)."""
        flags = []
        for (start, end), (before, after) in zip(
            itertools.pairwise(self.starts), itertools.pairwise(self.elsewhere), strict=True
        ):
            taken = (after - before) if after is not None and before is not None else 0.0
            flags.append(taken > _DISTURBED * (end - start))
        return flags


# A step during which other processes took more than this share of one CPU in user space was
# disturbed from outside (on this machine, a background test run takes a whole CPU; the
# system's own services take about 1%).
_DISTURBED = 0.2


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


# Where the kernel hands freed memory back to a hypervisor (free page reporting), how much it
# has handed back so far; the module parameter exists on some virtual machines only.
_REPORTED = "/sys/module/page_reporting/parameters/reported_kib"


def settle(quiet_for: float = 3.0, longest: float = 60.0) -> float:
    """Wait until the memory the last run freed (its page cache, deleted with its checkpoints:
    1.5 GiB after a synchronous run) is handed back to the hypervisor: until nothing more was
    reported for ``quiet_for`` seconds. On such a machine the next run's first steps otherwise
    page-fault slowly (1.5-2.4x) while the host takes that memory back, whatever their own
    mode. Elsewhere there is nothing to wait for. Returns the seconds waited."""
    if not os.path.exists(_REPORTED):
        return 0.0
    started = last_change = time.monotonic()
    with open(_REPORTED) as counter:
        reported = counter.read()
    while time.monotonic() - last_change < quiet_for and time.monotonic() - started < longest:
        time.sleep(0.25)
        with open(_REPORTED) as counter:
            now = counter.read()
        if now != reported:
            reported, last_change = now, time.monotonic()
    return time.monotonic() - started


def train(work_dir: str, steps: int, every: int, mode: str, keep: int) -> StepClock:
    """The clock of one run's steps; ``mode``: 'none' (no checkpoint), 'sync' or 'async'."""
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
    return clock


def slowest_of(clock: StepClock, first: int, last: int) -> tuple[float, bool]:
    """The slowest of steps ``first``..``last`` (inclusive) and whether it was disturbed."""
    times, disturbed = clock.times(), clock.disturbed()
    index = max(range(first, last + 1), key=times.__getitem__)
    return times[index], disturbed[index]


def periods(clock: StepClock, every: int) -> list[tuple[float, bool]]:
    """The slowest step of each save's period (the first save's first). Step i (0-based) ends
    with iteration i + 1, so the save of iteration n runs in step n - 1; its period is that
    step and those after it, up to the step before the next save."""
    count = len(clock.times())
    return [
        slowest_of(clock, start, min(start + every, count) - 1)
        for start in range(every - 1, count, every)
    ]


def under_way(clock: StepClock, every: int, ends: list[float]) -> list[tuple[int, float, bool]]:
    """For each save after the first: (how many steps, the slowest of them, disturbed) from
    the step that saved to the step in which its background write was over (``ends``, in the
    saves' order)."""
    starts, count = clock.starts, len(clock.times())
    windows = []
    for number, start in enumerate(range(every - 1, count, every)):
        if number == 0 or number >= len(ends):
            continue
        last = start
        while last + 1 < count and starts[last + 1] < ends[number]:
            last += 1
        windows.append((last - start + 1, *slowest_of(clock, start, last)))
    return windows


def spread(values: list[float], normal: float) -> str:
    """Median, 90th percentile and worst of ``values`` as multiples of ``normal``, and how many
    exceed 1.5x."""
    if not values:
        return "no period"
    ordered = sorted(value / normal for value in values)
    tenth = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    over = sum(value > 1.5 for value in ordered)
    return (
        f"median {ordered[len(ordered) // 2]:4.2f}x, 90th percentile {tenth:4.2f}x, "
        f"worst {ordered[-1]:4.2f}x, over 1.5x in {over} of {len(ordered)}"
    )


def worst(values: list[float], normal: float) -> str:
    return f"{max(values) / normal:4.2f}x" if values else "none left"


MODES = ("none", "sync", "async")


def more_often(over: int, total: int, floor_over: int, floor_total: int) -> float:
    """One-sided Fisher exact test: the chance that periods over 1.5x fall at least ``over``
    of ``total`` on one side if both sides had the same rate (small: the save makes them
    more frequent; large: the counts are the machine's noise)."""
    drawn, pool = over + floor_over, total + floor_total
    ways = math.comb(pool, drawn)
    return (
        sum(
            math.comb(total, k) * math.comb(floor_total, drawn - k)
            for k in range(over, min(total, drawn) + 1)
        )
        / ways
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--keep", type=int, default=-1, help="max_keep_ckpts (-1: all)")
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help="which runs alternate (none: no checkpoints, the floor, always run)",
    )
    args = parser.parse_args()
    modes = ("none", *(m for m in args.modes.split(",") if m in MODES and m != "none"))
    print(
        f"{LAYERS} x Linear({WIDTH}, {WIDTH}): "
        f"{LAYERS * (WIDTH * WIDTH + WIDTH) * 4 / 2**20:.0f} MiB of parameters; batch {BATCH}, "
        f"{args.steps} steps, a checkpoint every {args.every}, max_keep_ckpts={args.keep}; "
        "torch threads "
        f"{torch.get_num_threads()}, {os.cpu_count()} CPUs"
    )
    # Per mode, the slowest step of each save's period and whether it was disturbed from
    # outside; the first saves apart.
    slowest: dict[str, list[tuple[float, bool]]] = {mode: [] for mode in modes}
    firsts: dict[str, list[tuple[float, bool]]] = {mode: [] for mode in modes}
    plain: list[float] = []
    plain_clocks: list[StepClock] = []
    windows: list[tuple[int, float, bool]] = []
    phases = Phases()
    settled = 0.0
    with tempfile.TemporaryDirectory() as root:
        for round_number in range(args.rounds):
            for mode in modes:
                work_dir = os.path.join(root, f"{mode}_{round_number}")
                # The runs before left dirty pages (their checkpoints): written back to the disk
                # now, not by the kernel in the middle of this run's steps.
                os.sync()
                ends_before = len(phases.ends)
                clock = train(work_dir, args.steps, args.every, mode, args.keep)
                # The runner just used holds reference cycles (hooks and loops name it): freed
                # now, not by a collection in the middle of a later run's step, where freeing
                # its 256 MiB model and buffers took 60-170 ms (a spike of no save's making).
                gc.collect()
                shutil.rmtree(work_dir)
                settled += settle()
                first, *later = periods(clock, args.every)
                firsts[mode].append(first)
                slowest[mode].extend(later)
                if mode == "none":
                    steps = zip(clock.times(), clock.disturbed(), strict=True)
                    later_steps = itertools.islice(steps, args.every, None)
                    plain.extend(seconds for seconds, disturbed in later_steps if not disturbed)
                    plain_clocks.append(clock)
                if mode == "async":
                    windows.extend(under_way(clock, args.every, phases.ends[ends_before:]))
    # The normal step: the median of the undisturbed steps without checkpoints.
    normal = statistics.median(plain or [float("nan")])
    print(f"normal step (no checkpoints, undisturbed): {normal * 1e3:.1f} ms")
    # While the save is under way: from its step to the end of its write. The runs without
    # checkpoints, cut the same way (as many steps from each period's start), are the floor.
    length = round(statistics.median(count for count, *_ in windows)) if windows else 1
    floor = [
        slowest_of(clock, start, min(start + length, len(clock.times())) - 1)
        for clock in plain_clocks
        for start in range(2 * args.every - 1, len(clock.times()), args.every)
    ]
    under = [(seconds, disturbed) for _, seconds, disturbed in windows]
    for quiet in (False, True):
        report(modes, slowest, firsts, under, floor, normal, length, quiet)
    print(f"waited {settled:.0f} s in all between runs for freed memory to be handed back")
    waited, writes = phases.waited(), phases.writes or [0.0]
    if "async" in modes:
        print(
            f"async: background writes took {statistics.median(writes):.2f} s (median of "
            f"{len(phases.writes)}); {len(waited)} optimizer steps waited for the copy, "
            f"median {statistics.median(waited or [0.0]) * 1e3:.0f} ms, "
            f"longest {max(waited or [0.0]) * 1e3:.0f} ms (the first save's included)"
        )


def report(
    modes: tuple[str, ...],
    slowest: dict[str, list[tuple[float, bool]]],
    firsts: dict[str, list[tuple[float, bool]]],
    under: list[tuple[float, bool]],
    floor: list[tuple[float, bool]],
    normal: float,
    length: int,
    quiet: bool,
) -> None:
    """Print the measures over every period, or (``quiet``) over those whose slowest step
    other processes did not disturb."""

    def kept(values: list[tuple[float, bool]]) -> list[float]:
        return [seconds for seconds, disturbed in values if not (quiet and disturbed)]

    if quiet:
        print(
            "\nthe same, leaving out the periods whose slowest step other processes disturbed "
            f"(took over {_DISTURBED:.0%} of a CPU in user space):"
        )
    print("the slowest step of each save's whole period (from the step that saves to the next):")
    for mode in modes:
        label = "no save" if mode == "none" else mode
        left_out = len(slowest[mode]) - len(kept(slowest[mode]))
        print(
            f"  {label:>7}: {spread(kept(slowest[mode]), normal)}; "
            f"first save {worst(kept(firsts[mode]), normal)}"
            + (f"; {left_out} left out" if quiet else "")
        )
    if "async" not in modes:
        return
    print(
        "the slowest step while an asynchronous save is under way (from its step to the end of "
        f"its write: {length} steps in the median):"
    )
    print(f"    async: {spread(kept(under), normal)}")
    print(f"  no save: {spread(kept(floor), normal)} (the first {length} steps of each)")
    print("are periods over 1.5x more frequent with asynchronous saves than without (one-sided")
    print("Fisher exact test; a large p: the counts do not tell them apart from the noise)?")
    for label, ours, theirs in (
        ("whole periods", kept(slowest["async"]), kept(slowest["none"])),
        ("while under way", kept(under), kept(floor)),
    ):
        over = sum(value > 1.5 * normal for value in ours)
        floor_over = sum(value > 1.5 * normal for value in theirs)
        chance = more_often(over, len(ours), floor_over, len(theirs)) if ours else 1.0
        print(
            f"  {label}: {over} of {len(ours)} against {floor_over} of {len(theirs)}, "
            f"p = {chance:.2f}"
        )


if __name__ == "__main__":
    main()
