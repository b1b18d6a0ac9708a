"""How long importing a module adds to the start of a fresh Python interpreter.

Each module is timed as the best of N fresh interpreters running ``import MODULE``, against the
best of N running ``pass``; the difference is what the import costs a user's program.

    python benchmarks/import_time.py                      # treadle.logging
    python benchmarks/import_time.py treadle.logging treadle.config --runs 25
    python benchmarks/import_time.py treadle.logging --budget-ms 15   # exit 1 if over budget
    python benchmarks/import_time.py treadle.dist --baseline torch     # cost over import torch
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

# An installed package has its bytecode compiled; a source tree run with PYTHONDONTWRITEBYTECODE
# would compile every module at each start and time the compiler instead of the import.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def best_of(code: str, runs: int) -> float:
    """Fastest wall time, in seconds, of ``runs`` fresh interpreters running ``code``."""
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=ENV)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", default=["treadle.logging"])
    parser.add_argument("--runs", type=int, default=15, help="interpreters per measurement")
    parser.add_argument("--budget-ms", type=float, help="fail if an import costs more than this")
    parser.add_argument(
        "--baseline",
        help="a module imported in the baseline too, so only the cost on top of it is measured",
    )
    args = parser.parse_args()

    # Warm the file system cache and write the .pyc files before timing anything.
    for module in args.modules:
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True, env=ENV)
    # Baseline and imports are measured alternately, so a slow spell of the machine hits both.
    base_code = f"import {args.baseline}" if args.baseline else "pass"
    baseline = best_of(base_code, args.runs)
    print(f"{'python -c ' + repr(base_code):<40} {baseline * 1000:8.1f} ms")
    over_budget = False
    for module in args.modules:
        code = f"{base_code}; import {module}"
        total = best_of(code, args.runs)
        baseline = min(baseline, best_of(base_code, args.runs))
        cost = (total - baseline) * 1000
        label = f"python -c {code!r}"
        print(f"{label:<40} {total * 1000:8.1f} ms  (+{cost:.1f} ms)")
        if args.budget_ms is not None and cost > args.budget_ms:
            print(f"  {module} costs {cost:.1f} ms, over the budget of {args.budget_ms:g} ms")
            over_budget = True
    return 1 if over_budget else 0


if __name__ == "__main__":
    sys.exit(main())
