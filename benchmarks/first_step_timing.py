"""Time fresh interpreters from their start to the end of a training's first step, several
sides in turn, and print each side's median, spread and ratio to a baseline side.

Used by benchmarks/runner_startup.py. A side is a command line (run with the benchmark's
interpreter unless it names another) plus environment variables; every run gets a fresh
temporary work dir, substituted for ``{work_dir}`` in its arguments.
"""

from __future__ import annotations

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


def run_once(side: Side) -> float | None:
    """Seconds from starting ``side`` to its exit, or None (with its error printed) if it failed."""
    with tempfile.TemporaryDirectory(prefix="treadle-startup-") as work_dir:
        argv = [arg.replace("{work_dir}", work_dir) for arg in side.argv]
        start = time.perf_counter()
        done = subprocess.run(
            [side.python, *argv], env={**ENV, **side.env}, capture_output=True, text=True
        )
        elapsed = time.perf_counter() - start
    if done.returncode != 0 or (side.needs_done_marker and DONE not in done.stdout):
        print(f"  {side.label} failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
        return None
    return elapsed


def time_sides(sides: list[Side], runs: int) -> dict[str, list[float]]:
    """``runs`` wall times per side, the sides run in turn so that a slow spell hits them all.
    A side that fails once is dropped."""
    times: dict[str, list[float]] = {side.label: [] for side in sides}
    for side in sides:  # one untimed run each: bytecode written, files in the page cache
        if run_once(side) is None:
            times.pop(side.label)
    for _ in range(runs):
        for side in sides:
            if side.label in times:
                seconds = run_once(side)
                if seconds is None:
                    times.pop(side.label)
                else:
                    times[side.label].append(seconds)
    return times


def report(times: dict[str, list[float]], baseline: str) -> None:
    """Print median, min-max and the ratio of each side's median to ``baseline``'s."""
    base = statistics.median(times[baseline]) if baseline in times else None
    for label, values in times.items():
        median = statistics.median(values)
        line = (
            f"  {label:<36} {median * 1000:7.0f} ms median "
            f"({min(values) * 1000:.0f}-{max(values) * 1000:.0f}, {len(values)} runs)"
        )
        if base is not None and label != baseline:
            line += f"   {median / base:5.2f}x the bare import (+{(median - base) * 1000:.0f} ms)"
        print(line)
