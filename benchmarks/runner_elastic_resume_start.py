"""Elastic resume at another world size starts as fast as at the same one: the time from starting
the processes to the end of the first new optimizer step, resuming a checkpoint written at 90%
of an epoch by a run of the same number of processes and by a run of another number.

The runs are ``treadle train CONFIG --launcher pytorch --resume CKPT`` in gloo groups on this
machine (``elastic=dict(global_batch_size=4)``, IterBasedTrainLoop over a DefaultSampler, the
items of runner_resume_start.py: 1 ms each to load). Both checkpoints stand at the same global
position, so a resume at another size reads no more batches than one at the same size; what
differs is only which random states and sampler state it takes (rank 0's for every rank).
Each figure is the median of ``--runs`` starts, taken in turn: the CPU time the busiest process
used until its first step (what a loaded machine disturbs least; the budget applies to it) and
the wall time until every process has made it.

    python benchmarks/runner_elastic_resume_start.py [--quick] [--runs 3] [--check]

Budget: resuming at another size <= 1.10x resuming at the same size (``--check`` exits 1).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from runner_resume_start import ENV  # noqa: E402

sys.path.insert(0, str(HERE.parent / "tests" / "support"))
from gloo_group import free_port, torchrun_variables  # noqa: E402
from runner_resume_start import config_text as resume_config_text  # noqa: E402

BUDGET = 1.10
GLOBAL_BATCH = 4

# End the process at the end of its first optimizer step, printing its CPU time until then.
EXIT_AT_FIRST_STEP = """
import os, sys
from torch.optim.optimizer import register_optimizer_step_post_hook
def _first_step_done(optimizer, args, kwargs):
    times = os.times()
    sys.stdout.write(f"\\nFIRST STEP DONE cpu={times.user + times.system:.4f}\\n")
    sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)
register_optimizer_step_post_hook(_first_step_done)
"""

CHILD = """
sys.path.insert(0, {benchmarks!r})
import runner_resume_start
runner_resume_start.register("treadle")
from treadle.runner.cli.main import main
argv = ["train", {config!r}, "--work-dir", {work_dir!r}, "--no-progress", "--launcher", "pytorch"]
if {checkpoint!r}:
    argv += ["--resume", {checkpoint!r}]
sys.exit(main(argv))
"""


def config_text(per_epoch: int, item_ms: float, max_iters: int, every: int) -> str:
    """runner_resume_start's config, elastic: one sample per loader item, ``GLOBAL_BATCH`` a
    step whatever the number of processes."""
    return resume_config_text(
        per_epoch * GLOBAL_BATCH,
        1,
        item_ms,
        max_iters,
        every,
        env_cfg=dict(dist_cfg=dict(backend="gloo")),
        elastic=dict(global_batch_size=GLOBAL_BATCH),
    )


def run_group(
    size: int, config: Path, work_dir: Path, checkpoint: str, first_step: bool
) -> tuple[float, float]:
    """(seconds from starting ``size`` processes to the end of the last one, the most CPU
    seconds one of them used until its first step)."""
    text = CHILD.format(
        benchmarks=str(HERE), config=str(config), work_dir=str(work_dir), checkpoint=checkpoint
    )
    text = (EXIT_AT_FIRST_STEP if first_step else "import sys\n") + text
    port = free_port()
    start = time.perf_counter()
    processes = []
    for rank in range(size):
        env = dict(ENV, **torchrun_variables(rank, size, port), CUDA_VISIBLE_DEVICES="")
        command = [sys.executable, "-c", text]
        pipes = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        processes.append(subprocess.Popen(command, env=env, **pipes))
    outputs = [process.communicate(timeout=600) for process in processes]
    elapsed = time.perf_counter() - start
    cpu = 0.0
    for process, (out, err) in zip(processes, outputs, strict=True):
        if process.returncode != 0 or (first_step and "FIRST STEP DONE" not in out):
            raise RuntimeError(f"a process failed (exit {process.returncode}):\n{err[-3000:]}")
        if first_step:
            cpu = max(cpu, float(out.rsplit("cpu=", 1)[1].split()[0]))
    return elapsed, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 iterations an epoch, 1 run")
    parser.add_argument("--runs", type=int, default=None, help="starts per figure (3)")
    parser.add_argument("--per-epoch", type=int, default=None, help="global batches an epoch")
    parser.add_argument("--item-ms", type=float, default=1.0, help="load time of one item")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--check", action="store_true", help="exit 1 if over the budget")
    args = parser.parse_args()
    per_epoch = args.per_epoch or (200 if args.quick else 1000)
    runs = args.runs or (1 if args.quick else 3)
    tenth = per_epoch // 10
    print(
        f"elastic resume, from starting the processes to the first new step: {per_epoch} "
        f"global batches of {GLOBAL_BATCH} an epoch, {args.item_ms:g} ms an item, checkpoint "
        f"at 90%, median of {runs}"
    )
    over = False
    with tempfile.TemporaryDirectory(prefix="treadle-elastic-start-") as name:
        root = Path(name)
        prepare = root / "prepare.py"
        prepare.write_text(config_text(per_epoch, 0.0, 9 * tenth, 9 * tenth))
        saved = {}
        for size in args.sizes:
            run_group(size, prepare, root / f"saved{size}", "", first_step=False)
            saved[size] = str(root / f"saved{size}" / f"iter_{9 * tenth}.pth")
        timed = root / "timed.py"
        timed.write_text(config_text(per_epoch, args.item_ms, 2 * per_epoch, per_epoch))
        for size in args.sizes:
            walls: dict[int, list[float]] = {source: [] for source in args.sizes}
            cpus: dict[int, list[float]] = {source: [] for source in args.sizes}
            for run in range(runs):
                for source in args.sizes:
                    work_dir = root / f"at{size}_from{source}_{run}"
                    wall, cpu = run_group(size, timed, work_dir, saved[source], first_step=True)
                    walls[source].append(wall)
                    cpus[source].append(cpu)
            wall = {source: statistics.median(found) for source, found in walls.items()}
            cpu = {source: statistics.median(found) for source, found in cpus.items()}
            for source in args.sizes:
                if source == size:
                    continue
                ratio = cpu[source] / cpu[size]
                ok = ratio <= BUDGET
                over = over or not ok
                print(
                    f"  at {size} process(es): CPU to the first step from {size}: "
                    f"{cpu[size]:.2f} s, from {source}: {cpu[source]:.2f} s, ratio {ratio:.3f}x "
                    f"(budget {BUDGET:g}x {'ok' if ok else 'OVER'}); wall {wall[size]:.2f} s "
                    f"and {wall[source]:.2f} s, ratio {wall[source] / wall[size]:.3f}x",
                    flush=True,
                )
    return 1 if over and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
