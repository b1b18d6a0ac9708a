"""Start-up of the Runner: what importing it adds over ``import torch``, and how long a training
takes from its launch to the end of its first iteration, against a bare
``python -c "import torch"`` timed in the same run.

Imports are timed as in benchmarks/import_time.py: the best of N fresh interpreters, against
the best of N running only ``import torch``; both sides run one ``gc.collect()`` after
``import torch`` (see ``AFTER_TORCH``).

Launch to first step: each side is a fresh interpreter, timed by the parent from its start to its
exit, which comes at the end of the first optimizer step (a global optimizer step hook,
``torch.optim.optimizer.register_optimizer_step_post_hook``, ends the process there, so nothing
of either engine is changed). The sides run in turn, ``--job-runs`` times each, so a slow
spell of the machine hits them alike; each prints its median, spread (min-max) and its ratio to
the bare import's median, for wall time and for CPU time (user + system: on a machine loaded by
other jobs the wall times spread widely, the CPU times much less). Two trainings:

- the small one (startup_mlp_config.py / startup_mlp.py): an MLP on random data with validation,
  a metric, checkpoints and the default hooks; sides: ``python -c "import torch"``, plain
  PyTorch to its first step (the floor: torch's optimizer itself imports ``torch._dynamo``),
  ``treadle train`` (the command, ``python -m treadle.runner``), treadle's
  ``Runner.from_cfg(cfg).train()`` from a script (what an MMEngine project's tools/train.py
  does), and MMEngine's where installed;
- the README's main job (examples/digits/config.py) with ``treadle train`` and, where
  installed, MMEngine on the same config, its custom imports pointed at
  benchmarks/mmengine_digits.py.

    python benchmarks/runner_startup.py [--runs 10] [--job-runs 5] [--check]
    hatch run mmengine:python benchmarks/runner_startup.py     # adds MMEngine

Budgets: ``import treadle.runner`` <= 50 ms over ``import torch``; ``from treadle.runner import
Runner`` <= 150 ms (MMEngine's Runner: about +960 ms on the reference machine), judged on wall
time, with the statement's own CPU time (timed inside the interpreter) beside it for loaded
machines. Launch to first
step of the small training: goal 1.18x the bare import (figures: docs/runner/performance.md).
Every entry point (scripts, the compat launcher, the command) against the plain loop, with the
per-round ratios: benchmarks/runner_entry_points.py (issue 42).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

from first_step_timing import Side, report, time_sides
from import_time import ENV, best_of

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parent / "examples" / "digits" / "config.py"
SMALL_CONFIG = HERE / "startup_mlp_config.py"
# torch 2.13's import leaves a full garbage collection due: the next few thousand allocations,
# whatever makes them, set off a walk over its ~250k objects (about 0.1 s here), which any program
# pays once after importing torch. Both sides collect first, so that an import statement is
# charged its own cost and not that collection.
AFTER_TORCH = "import torch, gc; gc.collect()"
# Over ``import torch``: the package alone, and the Runner with everything it imports.
BUDGETS_MS = {"import treadle.runner": 50.0}
RUNNER_BUDGET_MS = 150.0

# The child: end the process as soon as the first optimizer step is done.
EXIT_AT_FIRST_STEP = """
import os, sys, torch
from torch.optim.optimizer import register_optimizer_step_post_hook
def _first_step_done(optimizer, args, kwargs):
    sys.stdout.write("\\nFIRST STEP DONE\\n"); sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)
register_optimizer_step_post_hook(_first_step_done)
"""

# Started as the command is (arguments in sys.argv), so it runs as `treadle train` does. The
# command pauses the garbage collector from its start, before torch is imported (see
# treadle.runner.cli.startup_gc): so does this child, before its exit hook imports torch.
TREADLE_TRAIN = (
    "from treadle.runner.cli import startup_gc\nstartup_gc.pause()\n"
    + EXIT_AT_FIRST_STEP
    + """
from treadle.runner.cli.main import main
sys.argv = ["treadle", "train", {config!r}, "--work-dir", {work_dir!r}, "--no-progress"]
sys.exit(main())
"""
)

# What an MMEngine project's tools/train.py does, with either engine; the config's custom
# import (startup_mlp.py) registers its parts in that engine and ends the process at the first
# step.
SCRIPT_TRAIN = """
import sys
sys.path.insert(0, {benchmarks!r})
from {engine}.config import Config
from {engine}.runner import Runner
cfg = Config.fromfile({config!r})
cfg.work_dir = {work_dir!r}
Runner.from_cfg(cfg).train()
sys.exit("training ended without an optimizer step")
"""

MMENGINE_TRAIN = (
    EXIT_AT_FIRST_STEP
    + """
sys.path.insert(0, {benchmarks!r})
from mmengine.config import Config
from mmengine.runner import Runner
cfg = Config.fromfile({config!r}, import_custom_modules=False)
import mmengine_digits  # the config's custom import, on MMEngine's classes
cfg.work_dir = {work_dir!r}
Runner.from_cfg(cfg).train()
sys.exit("training ended without an optimizer step")
"""
)


def has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def best_cpu_of(statement: str, runs: int) -> float:
    """Least CPU time, in seconds, that ``statement`` takes in ``runs`` fresh interpreters, each
    timing it itself after ``AFTER_TORCH``: what a loaded machine disturbs far less than the
    difference of two wall times of whole interpreters."""
    code = (
        f"{AFTER_TORCH}; import time; start = time.process_time(); {statement}; "
        "print(time.process_time() - start)"
    )
    return min(
        float(
            subprocess.run(
                [sys.executable, "-c", code], check=True, env=ENV, capture_output=True
            ).stdout.split()[-1]
        )
        for _ in range(runs)
    )


def import_costs(runs: int) -> dict[str, tuple[float, float]]:
    """Milliseconds each import statement adds over ``import torch``: wall and CPU time."""
    statements = [
        "import treadle.runner",
        "from treadle.runner import Runner",
        "from treadle.runner.runner import Runner",
    ]
    if has("mmengine"):
        statements += ["import mmengine.runner", "from mmengine.runner import Runner"]
    importable = []
    for statement in statements:  # compile the bytecode and warm the file cache first
        code = f"{AFTER_TORCH}; {statement}"
        warm = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True)
        if warm.returncode == 0:
            importable.append(statement)
        else:
            print(f"({statement!r} fails here, skipped: {warm.stderr.decode().splitlines()[-1]})")
    costs = {}
    for statement in importable:
        code = f"{AFTER_TORCH}; {statement}"
        baseline = best_of(AFTER_TORCH, runs)
        total = best_of(code, runs)
        baseline = min(baseline, best_of(AFTER_TORCH, runs))
        costs[statement] = ((total - baseline) * 1000, best_cpu_of(statement, runs) * 1000)
    return costs


def small_training_sides() -> list[Side]:
    """The small training (startup_mlp_config.py), started every way a user starts one."""
    exit_env = {"STARTUP_EXIT_AT_FIRST_STEP": "1"}
    fill = dict(config=str(SMALL_CONFIG), benchmarks=str(HERE), work_dir="{work_dir}")
    sides = [
        Side("python -c 'import torch'", ["-c", "import torch"], needs_done_marker=False),
        Side("plain PyTorch (floor)", [str(HERE / "startup_mlp.py")]),
        Side(
            "treadle train (command)",
            [
                "-m",
                "treadle.runner",
                "train",
                str(SMALL_CONFIG),
                "--work-dir",
                "{work_dir}",
                "--no-progress",
            ],
            exit_env,
        ),
        Side(
            "treadle Runner.from_cfg (script)",
            ["-c", SCRIPT_TRAIN.format(engine="treadle", **fill)],
            exit_env,
        ),
    ]
    if has("mmengine"):
        sides.append(
            Side(
                "mmengine Runner.from_cfg (script)",
                ["-c", SCRIPT_TRAIN.format(engine="mmengine", **fill)],
                {**exit_env, "STARTUP_ENGINE": "mmengine"},
            )
        )
    return sides


def main_job_sides() -> list[Side]:
    """The README's main job (examples/digits/config.py): treadle's command, MMEngine's script."""
    fill = dict(config=str(CONFIG), benchmarks=str(HERE), work_dir="{work_dir}")
    sides = [
        Side("python -c 'import torch'", ["-c", "import torch"], needs_done_marker=False),
        Side("treadle train", ["-c", TREADLE_TRAIN.format(**fill)]),
    ]
    if has("mmengine"):
        sides.append(Side("mmengine Runner.from_cfg", ["-c", MMENGINE_TRAIN.format(**fill)]))
    return sides


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="interpreters per import timing")
    parser.add_argument("--job-runs", type=int, default=5, help="runs per side to the first step")
    parser.add_argument("--check", action="store_true", help="exit 1 if over the import budget")
    parser.add_argument("--no-imports", action="store_true", help="time the trainings only")
    parser.add_argument("--no-main-job", action="store_true", help="skip the digits job")
    args = parser.parse_args()

    over = False if args.no_imports else report_imports(args.runs)
    print(f"\nfrom launch to the end of the first step, {SMALL_CONFIG.name} (small MLP):")
    sides = small_training_sides()
    report(time_sides(sides, args.job_runs), baseline=sides[0].label)
    if args.no_main_job:
        return 1 if over and args.check else 0
    if not has("sklearn"):
        print("(first iteration of the main job: scikit-learn is not installed here, skipped)")
        return 1 if over and args.check else 0
    print(f"\nfrom launch to the end of the first step, {CONFIG.relative_to(HERE.parent)}:")
    sides = main_job_sides()
    report(time_sides(sides, args.job_runs), baseline=sides[0].label)
    return 1 if over and args.check else 0


def report_imports(runs: int) -> bool:
    """Print the import costs; True if treadle's is over the budget."""
    baseline = best_of("import torch", runs)
    print(f"python -c 'import torch'                  {baseline * 1000:8.1f} ms")
    over = False
    for statement, (cost, cpu) in import_costs(runs).items():
        line = f"{statement:<40} +{cost:7.1f} ms over import torch (CPU {cpu:6.1f} ms)"
        if statement.split()[1].startswith("treadle"):
            budget = BUDGETS_MS.get(statement, RUNNER_BUDGET_MS)
            ok = cost <= budget
            over = over or not ok
            line += f"   budget {budget:g} ms {'ok' if ok else 'OVER'}"
        print(line)

    return over


if __name__ == "__main__":
    sys.exit(main())
