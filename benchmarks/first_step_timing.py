"""Time fresh interpreters from their start to the end of a training's first step, several
sides in turn, and print each side's median, spread and ratio to a baseline side.

Used by benchmarks/runner_startup.py. A side is a command line (run with the benchmark's
interpreter unless it names another) plus environment variables; every run gets a fresh
temporary work dir, substituted for ``{work_dir}`` in its arguments.

Each run is timed twice: wall time, what a user waits, and CPU time (user + system, of the
process and what it waited for), which other jobs on a loaded machine disturb far less: when the
wall times spread widely, compare the CPU ratios.
"""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

from import_time import ENV

DONE = "FIRST STEP DONE"


@dataclass
class Side:
    """One way of starting the training: ``argv`` after the interpreter, and its variables."""

    label: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    python: str = sys.executable
    needs_done_marker: bool = True


@dataclass
class Timing:
    """One run of a side, in seconds: its wall time and its CPU time (user + system)."""

    wall: float
    cpu: float


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_once(side: Side) -> Timing | None:
    """``side`` timed from its start to its exit, or None (with its error printed) if it failed."""
    with tempfile.TemporaryDirectory(prefix="treadle-startup-") as work_dir:
        argv = [arg.replace("{work_dir}", work_dir) for arg in side.argv]
        cpu_before = _children_cpu()  # the runs are one at a time: the difference is this one's
        start = time.perf_counter()
        done = subprocess.run(
            [side.python, *argv], env={**ENV, **side.env}, capture_output=True, text=True
        )
        timing = Timing(time.perf_counter() - start, _children_cpu() - cpu_before)
    if done.returncode != 0 or (side.needs_done_marker and DONE not in done.stdout):
        print(f"  {side.label} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
        return None
    return timing


def time_sides(sides: list[Side], runs: int) -> dict[str, list[Timing]]:
    """``runs`` timings per side, the sides run in turn so that a slow spell hits them all.
    A side that fails once is dropped."""
    times: dict[str, list[Timing]] = {side.label: [] for side in sides}
    for side in sides:  # one untimed run each: bytecode written, files in the page cache
        if run_once(side) is None:
            times.pop(side.label)
    for _ in range(runs):
        for side in sides:
            if side.label in times:
                timing = run_once(side)
                if timing is None:
                    times.pop(side.label)
                else:
                    times[side.label].append(timing)
    return times


def report(times: dict[str, list[Timing]], baseline: str) -> None:
    """Print, for wall and for CPU time, each side's median, min-max and the ratio of its median
    to ``baseline``'s."""
    for kind in ("wall", "cpu"):
        print(f"  {kind} time:")
        values_of = {label: [getattr(t, kind) for t in runs] for label, runs in times.items()}
        base = statistics.median(values_of[baseline]) if baseline in values_of else None
        for label, values in values_of.items():
            median = statistics.median(values)
            line = (
                f"    {label:<36} {median * 1000:7.0f} ms median "
                f"({min(values) * 1000:.0f}-{max(values) * 1000:.0f}, {len(values)} runs)"
            )
            if base is not None and label != baseline:
                over = (median - base) * 1000
                line += f"   {median / base:5.2f}x the bare import (+{over:.0f} ms)"
            print(line)
