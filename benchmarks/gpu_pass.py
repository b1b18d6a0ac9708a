"""The GPU verification pass: everything only a GPU can show, checked in one command that fits
in 8 minutes on one H100, with one table at the end.

    python benchmarks/gpu_pass.py                       # on the GPU machine, first and only call
    python benchmarks/gpu_pass.py --wheels gpu_wheels   # pip-install the wheels carried along
    python benchmarks/gpu_pass.py --device cpu          # the CPU analogues (CI runs this)

Checks (benchmarks/gpu_pass_checks/, one module each, each run in a subprocess of its own with a
time limit so that one hang does not eat the pass): exact resume; no host-device sync on the
step path; AMP fp16/bf16; FSDP2 with bf16, activation checkpointing and torch.compile, resumed
from its sharded checkpoint; DeepSpeed ZeRO-2 fp16, resumed; the per-step overhead against
plain PyTorch; the device input path (batches copied on a side stream) against a naive
synchronous-copy loop; the data preprocessor's copies. The same code is run by the pytest tests
marked ``cuda`` (tests/runner/test_gpu_pass_cuda.py) and, in CPU mode, by
tests/runner/test_gpu_pass_cpu.py.

Only what is on the machine is used: its own torch build (the versions are printed first), and
any optional library a check needs (deepspeed, scikit-learn for the main job): a check whose
library is missing is skipped with the reason. Carry a library as wheels in a folder of the
working tree and name it with ``--wheels``: they are installed with ``pip --no-deps --no-index``
before the checks start.

Exit status: 0 when no check failed, 1 when one did, 2 when ``--device cuda`` finds no GPU or
treadle's Runner cannot be imported (a dependency missing: carry it with ``--wheels``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib
import importlib.metadata
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gpu_pass_checks import CHECKS, treadle_installed, use_repo_paths
from gpu_pass_checks.deepspeed import ON_CPU_VARIABLE
from gpu_pass_checks.rows import Row

DEFAULT_BUDGET_S = 450  # within 8 minutes with the versions, the table and a margin
MIN_CHECK_S = 20  # a check that would get less than this is skipped, not started
TREADLE_DISTRIBUTIONS = (
    "treadle-logging",
    "treadle-config",
    "treadle-registry",
    "treadle-fileio",
    "treadle-dist",
    "treadle-visual",
    "treadle-runner",
)


def install_wheels(folder: Path) -> None:
    """pip-install every wheel (and sdist) in ``folder``, without dependencies or an index:
    the GPU machine reaches no registry, and its torch must stay the one it has."""
    files = sorted(str(p) for p in folder.iterdir() if p.suffix == ".whl" or p.name.endswith(".gz"))
    if not files:
        print(f"--wheels {folder}: no wheel there, nothing installed")
        return
    command = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", *files]
    done = subprocess.run(command, capture_output=True, text=True)
    names = ", ".join(Path(f).name for f in files)
    if done.returncode:
        print(f"--wheels: pip failed ({done.stderr.strip().splitlines()[-1:]}); tried {names}")
    else:
        print(f"--wheels: installed {names}")


def version_of(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def nccl_version() -> str:
    import torch

    try:
        return ".".join(map(str, torch.cuda.nccl.version()))
    except Exception:  # a build without NCCL
        return "none"


def import_problem() -> str | None:
    """Why treadle's Runner cannot be imported here (a missing dependency), or None."""
    try:
        importlib.import_module("treadle.runner.runner")
    except ImportError as error:
        return f"{type(error).__name__}: {error}"
    return None


def print_versions(device: str, installed: bool) -> None:
    """The machine, torch, CUDA and the device, then treadle's (``installed``, or imported from
    the source tree) and the optional packages'."""
    import torch

    print(f"GPU verification pass, {datetime.date.today()}, --device {device}")
    print(f"python {platform.python_version()}, {platform.platform()}, {os.cpu_count()} CPUs")
    line = f"torch {torch.__version__}"
    if torch.cuda.is_available():
        name = torch.cuda.get_device_name(0)
        capability = ".".join(map(str, torch.cuda.get_device_capability(0)))
        memory = torch.cuda.get_device_properties(0).total_memory / 2**30
        line += (
            f", CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}, "
            f"{name} (sm {capability}, {memory:.0f} GiB), nccl {nccl_version()}"
        )
    else:
        line += ", no CUDA device"
    print(line)
    if installed:
        print(", ".join(f"{name} {version_of(name)}" for name in TREADLE_DISTRIBUTIONS))
    else:
        print("treadle: not installed, imported from the working tree's packages/*/src")
    print(", ".join(f"{name} {version_of(name)}" for name in ("deepspeed", "scikit-learn")))


# --------------------------------------------------------------------------------------------
# One check in a subprocess.


def child_env(device: str) -> dict[str, str]:
    env = dict(os.environ)
    if device == "cpu":
        # The CPU analogues run on the CPU even on a machine with a GPU.
        env["CUDA_VISIBLE_DEVICES"] = ""
    else:
        # cuBLAS is deterministic only with this (read when CUDA starts): exact resume needs it.
        env.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc; none elsewhere). Some leave its process group:
    ninja starts each compiler of a JIT-built extension in a group of its own."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            # The command name (2nd field) may hold spaces: the parent is the 2nd after ')'.
            parents[int(stat.parent.name)] = int(stat.read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, frontier = [], [pid]
    while frontier:
        children = [child for child, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def kill_tree(process: subprocess.Popen) -> None:
    """Kill ``process``, its process group and whatever it started outside that group."""
    below = descendants(process.pid)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    for pid in below:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait()


def run_check(name: str, device: str, limit_s: float, log_dir: Path) -> list[Row]:
    """Run check ``name`` in a subprocess for at most ``limit_s`` seconds; its rows, or one
    failed row saying why it gave none (crash, time out)."""
    log_dir.mkdir(parents=True, exist_ok=True)
    result = log_dir / f"{name}.json"
    result.unlink(missing_ok=True)
    log = log_dir / f"{name}.log"
    command = [sys.executable, __file__, "--child", name, "--device", device]
    command += ["--result", str(result), "--work-dir", str(log_dir / f"{name}_work")]
    with open(log, "w") as output:
        process = subprocess.Popen(
            command,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=child_env(device),
            start_new_session=True,  # its DataLoader workers and process groups die with it
        )
        try:
            code = process.wait(timeout=limit_s)
        except subprocess.TimeoutExpired:
            kill_tree(process)
            return [Row(name, "fail", "", f"timed out after {limit_s:.0f} s (log: {log})")]
    if result.exists():
        return [Row(**row) for row in json.loads(result.read_text())]
    tail = [line for line in log.read_text(errors="replace").splitlines() if line.strip()][-1:]
    return [Row(name, "fail", "", f"exit {code}: {' '.join(tail)[:200]} (log: {log})")]


def child_main(name: str, device: str, result: Path, work_dir: Path) -> int:
    """In the subprocess: run the check, write its rows; an exception is a failed row."""
    use_repo_paths()
    work_dir.mkdir(parents=True, exist_ok=True)
    try:
        module = importlib.import_module(CHECKS[name].module)
        rows = module.run(device, work_dir)
    except Exception as error:
        traceback.print_exc()
        message = f"{type(error).__name__}: {str(error).strip().splitlines()[0][:200]}"
        rows = [Row(name, "fail", "", message)]
    result.write_text(json.dumps([row.to_json() for row in rows]))
    # Skip interpreter teardown: process groups and DataLoader workers can hang it.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


# --------------------------------------------------------------------------------------------
# The pass.


def run_pass(device: str, names: list[str], budget_s: float, log_dir: Path) -> list[Row]:
    """Every check in turn, each limited to its own time and to what is left of the budget."""
    deadline = time.monotonic() + budget_s
    rows: list[Row] = []
    for name in names:
        check = CHECKS[name]
        left = deadline - time.monotonic()
        limit = min(check.cuda_limit_s if device == "cuda" else check.cpu_limit_s, left)
        if limit < MIN_CHECK_S:
            rows.append(Row(name, "skip", "", f"the pass's budget of {budget_s:.0f} s is spent"))
            continue
        started = time.monotonic()
        print(f"[{name}] {check.what} ...", flush=True)
        found = run_check(name, device, limit, log_dir)
        print(f"[{name}] {time.monotonic() - started:.0f} s", flush=True)
        rows.extend(found)
    return rows


def format_table(rows: list[Row]) -> str:
    """The rows as one text table; the last column (reasons, notes) is not padded."""
    cells = [("check", "result", "figure", "reason / note")]
    cells += [(row.check, row.result, row.figure, row.reason) for row in rows]
    widths = [max(len(cell[i]) for cell in cells) for i in range(3)]

    def line(cell: tuple[str, ...]) -> str:
        return " | ".join([*(c.ljust(w) for c, w in zip(cell, widths, strict=False)), cell[3]])

    rule = "-+-".join("-" * w for w in [*widths, len(cells[0][3])])
    return "\n".join([line(cells[0]), rule, *(line(cell).rstrip(" |") for cell in cells[1:])])


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument(
        "--budget-s",
        type=float,
        default=DEFAULT_BUDGET_S,
        help="time for all the checks together; what is left when it is spent is skipped",
    )
    parser.add_argument(
        "--only", nargs="+", choices=list(CHECKS), help="these checks only (default: all)"
    )
    parser.add_argument(
        "--wheels",
        type=Path,
        help="a folder of wheels to pip-install first, without dependencies or an index "
        "(e.g. deepspeed's, built here with `pip wheel --no-deps -w DIR deepspeed==0.19.8 ...`)",
    )
    parser.add_argument(
        "--deepspeed-on-cpu",
        action="store_true",
        help="in CPU mode, also run the DeepSpeed check (bf16; DeepSpeed JIT-builds a C++ op "
        "for its CPU process group first: minutes on a small machine)",
    )
    parser.add_argument(
        "--log-dir", type=Path, help="where each check's log goes (default: a temporary folder)"
    )
    parser.add_argument("--json", type=Path, help="also write the rows to this file")
    parser.add_argument("--child", choices=list(CHECKS), help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--work-dir", type=Path, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        return child_main(args.child, args.device, args.result, args.work_dir)
    started = time.monotonic()
    if args.wheels:
        install_wheels(args.wheels)
    if args.deepspeed_on_cpu:
        os.environ[ON_CPU_VARIABLE] = "1"  # read by the check's subprocess
    installed = treadle_installed()
    use_repo_paths()
    print_versions(args.device, installed)
    problem = import_problem()
    if problem is not None:
        print(
            f"treadle.runner cannot be imported ({problem}): carry the missing packages as "
            "wheels in a folder of the working tree and name it with --wheels"
        )
        return 2
    import torch

    if args.device == "cuda" and not torch.cuda.is_available():
        print("no CUDA device here: run with --device cpu for the CPU analogues")
        return 2
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="treadle-gpu-pass-"))
    rows = run_pass(args.device, args.only or list(CHECKS), args.budget_s, log_dir)
    print()
    print(format_table(rows))
    failed = [row.check for row in rows if row.result == "fail"]
    print(
        f"\n{len(rows)} rows: {sum(r.result == 'pass' for r in rows)} passed, "
        f"{len(failed)} failed, {sum(r.result == 'skip' for r in rows)} skipped "
        f"in {time.monotonic() - started:.0f} s; logs in {log_dir}"
    )
    if args.json:
        args.json.write_text(json.dumps([row.to_json() for row in rows], indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
