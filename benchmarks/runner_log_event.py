"""What a log line costs inside a training, against the same calls run in a loop of their own.

Every ``interval`` iterations LoggerHook computes the log line's values
(``runner.log_processor.get_log_after_iter``), writes the line (``runner.logger.info``) and
appends its scalars to ``scalars.json`` (``runner.visualizer.add_scalars``). This benchmark
trains the tiny MLP of ``runner_step_overhead.py`` with treadle's Runner (default hooks,
interval 50) and times those three calls where they run, between training steps. After
training it calls them again, with the same arguments, back to back, and prints both medians
and their ratio: how much more the same Python code costs when it runs between the steps of a
small model than when it runs alone.

    python benchmarks/runner_log_event.py [--epochs 8] [--repeats 200]

The calls are timed by wrapping the bound methods of these objects of one Runner (its
attributes, not the classes); nothing else changes.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch
from runner_step_overhead import LOG_INTERVAL, SIZES, engine_model, runner_kwargs


def any_call(args: tuple) -> bool:
    return True


def train_log_line(args: tuple) -> bool:
    # The logger also writes the epochs' other messages (checkpoints, the experiment's name).
    return str(args[0]).startswith("Epoch(train)")


# part: (the Runner's attribute, its method, which calls of it serve a train log line)
PARTS = {
    "log values (get_log_after_iter)": ("log_processor", "get_log_after_iter", any_call),
    "log line (logger.info)": ("logger", "info", train_log_line),
    "scalars.json line (add_scalars)": ("visualizer", "add_scalars", any_call),
}


def row(name: str, placed: float, isolated: float) -> str:
    return f"  {name:34} {placed * 1e6:7.1f} us {isolated * 1e6:7.1f} us {placed / isolated:6.1f}x"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8, help="epochs of 200 steps")
    parser.add_argument("--repeats", type=int, default=200, help="calls of each part alone")
    args = parser.parse_args()
    torch.set_num_threads(1)

    from treadle.runner.hooks import Hook
    from treadle.runner.model import BaseModel
    from treadle.runner.runner import Runner

    size = SIZES["tiny"]
    in_place: dict[str, list[float]] = {part: [] for part in PARTS}
    last_call: dict[str, tuple[Any, tuple, dict]] = {}

    class TimeLogCalls(Hook):
        """Wraps the three calls before training starts, keeping each one's last arguments."""

        def before_train(self, runner: Any) -> None:
            for part, (owner, method, serves_log_line) in PARTS.items():
                target = getattr(runner, owner)
                function = getattr(target, method)
                setattr(target, method, timed_log_calls(part, function, serves_log_line))

    def timed_log_calls(part: str, function: Any, serves_log_line: Any) -> Any:
        """``function``, timed (and its arguments kept) where it serves a train log line."""
        times = in_place[part]

        def call(*a: Any, **k: Any) -> Any:
            if not serves_log_line(a):
                return function(*a, **k)
            last_call[part] = (function, a, k)
            start = time.perf_counter()
            try:
                return function(*a, **k)
            finally:
                times.append(time.perf_counter() - start)

        return call

    alone: dict[str, list[float]] = {part: [] for part in PARTS}
    with (
        tempfile.TemporaryDirectory(prefix="treadle-bench-") as work_dir,
        contextlib.redirect_stdout(sys.stderr),  # the engine's lines go to stderr
    ):
        runner = Runner(
            model=engine_model(BaseModel, size, "cpu"),
            custom_hooks=[TimeLogCalls()],
            **runner_kwargs(size, args.epochs, "cpu", work_dir, "log-event"),
        )
        runner.train()
        for part, (function, call_args, call_kwargs) in last_call.items():
            for _ in range(args.repeats):
                start = time.perf_counter()
                function(*call_args, **call_kwargs)
                alone[part].append(time.perf_counter() - start)

    # The first epoch warms up: its calls are left out.
    calls_per_epoch = len(in_place[next(iter(PARTS))]) // args.epochs
    print(
        f"tiny MLP, {size.steps_per_epoch} steps/epoch, log interval {LOG_INTERVAL}, "
        f"torch {torch.__version__}"
    )
    print(f"  {'part':34} {'in place':>10} {'alone':>10} {'ratio':>7}")
    totals = [0.0, 0.0]
    for part in PARTS:
        warm = in_place[part][calls_per_epoch:] or in_place[part]
        placed, isolated = statistics.median(warm), statistics.median(alone[part])
        totals[0] += placed
        totals[1] += isolated
        print(row(part, placed, isolated))
    print(row("together", *totals))
    return 0


if __name__ == "__main__":
    sys.exit(main())
