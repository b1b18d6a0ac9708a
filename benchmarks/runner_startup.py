"""Start-up of the Runner: what importing it adds over ``import torch``, and how long the
README's main job (examples/digits/config.py) takes from the command to its first training
iteration, with treadle and, where installed, MMEngine 0.10 on the same config.

Imports are timed as in benchmarks/import_time.py: the best of N fresh interpreters, against
the best of N running only ``import torch``. The first iteration is timed from starting the
process to the end of the first optimizer step: the child registers a global optimizer
step hook (``torch.optim.optimizer.register_optimizer_step_post_hook``) that ends the process
there, so nothing of either engine is changed. treadle's side runs ``treadle train CONFIG``;
MMEngine's runs what an MMEngine project's tools/train.py does (``Config.fromfile``,
``Runner.from_cfg(cfg).train()``) on the same config, its custom imports pointed at
benchmarks/mmengine_digits.py (the same data set, network and metric on MMEngine's classes).

    python benchmarks/runner_startup.py [--runs 10] [--check]
    hatch run mmengine:python benchmarks/runner_startup.py     # adds MMEngine

Budget: ``import treadle.runner`` and ``from treadle.runner import Runner`` ≤ 150 ms over
``import torch`` (MMEngine's Runner: about +960 ms on the reference machine).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from import_time import ENV, best_of

HERE = Path(__file__).resolve().parent
CONFIG = HERE.parent / "examples" / "digits" / "config.py"
BUDGET_MS = 150.0

# The child: end the process as soon as the first optimizer step is done.
EXIT_AT_FIRST_STEP = """
import os, sys, torch
from torch.optim.optimizer import register_optimizer_step_post_hook
def _first_step_done(optimizer, args, kwargs):
    sys.stdout.write("\\nFIRST STEP DONE\\n"); sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)
register_optimizer_step_post_hook(_first_step_done)
"""

TREADLE_TRAIN = (
    EXIT_AT_FIRST_STEP
    + """
from treadle.runner.cli.main import main
sys.exit(main(["train", {config!r}, "--work-dir", {work_dir!r}, "--no-progress"]))
"""
)

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


def import_costs(runs: int) -> dict[str, float]:
    """Milliseconds each import statement adds over ``import torch``."""
    statements = [
        "import treadle.runner",
        "from treadle.runner import Runner",
        "from treadle.runner.runner import Runner",
    ]
    if has("mmengine"):
        statements += ["import mmengine.runner", "from mmengine.runner import Runner"]
    importable = []
    for statement in statements:  # compile the bytecode and warm the file cache first
        code = f"import torch; {statement}"
        warm = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True)
        if warm.returncode == 0:
            importable.append(statement)
        else:
            print(f"({statement!r} fails here, skipped: {warm.stderr.decode().splitlines()[-1]})")
    costs = {}
    for statement in importable:
        baseline = best_of("import torch", runs)
        total = best_of(f"import torch; {statement}", runs)
        baseline = min(baseline, best_of("import torch", runs))
        costs[statement] = (total - baseline) * 1000
    return costs


def first_iteration(code: str, runs: int) -> float | None:
    """Best wall time, in seconds, from starting ``python -c code`` to its first step."""
    best = None
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="treadle-startup-") as work_dir:
            text = code.format(config=str(CONFIG), work_dir=work_dir, benchmarks=str(HERE))
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", text], env=ENV, capture_output=True, text=True
            )
            elapsed = time.perf_counter() - start
        if done.returncode != 0 or "FIRST STEP DONE" not in done.stdout:
            print(f"  failed (exit {done.returncode}):\n{done.stderr[-3000:]}", file=sys.stderr)
            return None
        best = elapsed if best is None else min(best, elapsed)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="interpreters per import timing")
    parser.add_argument("--job-runs", type=int, default=3, help="runs of the main job per side")
    parser.add_argument("--check", action="store_true", help="exit 1 if over the import budget")
    parser.add_argument("--no-imports", action="store_true", help="time the main job only")
    args = parser.parse_args()

    over = False if args.no_imports else report_imports(args.runs)
    if not has("sklearn"):
        print("(first iteration of the main job: scikit-learn is not installed here, skipped)")
        return 1 if over and args.check else 0
    print(f"\nfrom the command to the first iteration of {CONFIG.relative_to(HERE.parent)}:")
    sides = {"treadle train": TREADLE_TRAIN}
    if has("mmengine"):
        sides["mmengine Runner.from_cfg"] = MMENGINE_TRAIN
    for label, code in sides.items():
        seconds = first_iteration(code, args.job_runs)
        shown = "failed" if seconds is None else f"{seconds * 1000:8.1f} ms"
        print(f"  {label:<26} {shown}")
    return 1 if over and args.check else 0


def report_imports(runs: int) -> bool:
    """Print the import costs; True if treadle's is over the budget."""
    baseline = best_of("import torch", runs)
    print(f"python -c 'import torch'                  {baseline * 1000:8.1f} ms")
    over = False
    for statement, cost in import_costs(runs).items():
        line = f"{statement:<40} +{cost:7.1f} ms over import torch"
        if statement.split()[1].startswith("treadle"):
            ok = cost <= BUDGET_MS
            over = over or not ok
            line += f"   budget {BUDGET_MS:g} ms {'ok' if ok else 'OVER'}"
        print(line)

    return over


if __name__ == "__main__":
    sys.exit(main())
