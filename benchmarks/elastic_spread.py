"""Elastic resume of a model with BatchNorm and dropout, against the run-to-run spread of
uninterrupted runs.

With BatchNorm (statistics over each process's share of the global batch) and dropout (drawn
from each process's own generator), a step depends on how the global batch is split, so a run
resumed at another world size cannot equal the uninterrupted one. What it should do is train as
well: its loss curve should stay within the spread of uninterrupted runs that differ only in
that same kind of randomness. Measured here, with tests/support/elastic_toys.py's
``ElasticToyNoisyModel`` (BatchNorm1d and Dropout(0.2)) and ``elastic=dict(global_batch_size=
16)``, on gloo groups of this machine:

- the spread: ``--seeds`` uninterrupted 2-process runs whose ``randomness.seed`` differs (the
  dropout draws and every other per-process generator; the data order and the per-sample
  augmentation are the sampler's, seed 0, and the same), and uninterrupted runs of the first
  seed at 1 and 4 processes (another BatchNorm split);
- the resumed runs: the first seed's 2-process run checkpointed at ``--resume-at`` and resumed
  at 1, 2 and 4 processes.

For each resumed run it prints, over the iterations after the checkpoint, how many of its losses
lie inside the spread's envelope (min-max of the uninterrupted runs at that iteration), its
largest distance outside it, and the mean of its last ``--tail`` losses against the envelope of
the uninterrupted runs' means.

    python benchmarks/elastic_spread.py [--seeds 5] [--iters 60] [--resume-at 20]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = ROOT / "tests" / "support"


def _cfg(work_dir: str, seed: int, iters: int, every: int, **overrides):
    sys.path.insert(0, str(SUPPORT))
    from elastic_toys import elastic_cfg

    cfg = elastic_cfg(
        work_dir,
        loop="iter",
        elastic=dict(global_batch_size=16),
        length=240,
        checkpoint_interval=every,
        model="ElasticToyNoisyModel",
        launcher="pytorch",
        randomness=dict(seed=seed),
        **overrides,
    )
    cfg["train_cfg"] = dict(by_epoch=False, max_iters=iters)
    cfg["train_dataloader"]["sampler"] = dict(type="InfiniteSampler", shuffle=True, seed=0)
    cfg["param_scheduler"] = [
        dict(type="LinearLR", start_factor=0.2, by_epoch=False, begin=0, end=5)
    ]
    cfg["optim_wrapper"] = dict(type="OptimWrapper", optimizer=dict(type="Adam", lr=0.01))
    cfg["default_hooks"]["logger"] = dict(type="LoggerHook", interval=10)
    return cfg


def worker(jobs_path: str, out_path: str) -> None:
    """One rank: run every job of the JSON list, write rank 0's losses."""
    sys.path.insert(0, str(SUPPORT))
    from elastic_toys import losses

    from treadle import dist
    from treadle.runner.runner import Runner

    dist.init_dist("pytorch", backend="gloo")
    found = {}
    for job in json.loads(Path(jobs_path).read_text()):
        cfg = _cfg(job["work_dir"], job["seed"], job["iters"], job["every"])
        if job.get("resume"):
            cfg.update(resume=True, load_from=job["resume"])
        runner = Runner(**cfg)
        runner.train()
        found[job["name"]] = losses(runner)
    if dist.get_rank() == 0:
        Path(out_path).write_bytes(pickle.dumps(found))
    dist.barrier()


def run_group(size: int, jobs: list[dict], root: Path) -> dict:
    sys.path.insert(0, str(SUPPORT))
    from gloo_group import free_port, torchrun_variables

    port = free_port()
    jobs_path, out_path = root / f"jobs{size}.json", root / f"out{size}.pkl"
    jobs_path.write_text(json.dumps(jobs))
    processes = []
    for rank in range(size):
        env = dict(os.environ, **torchrun_variables(rank, size, port), CUDA_VISIBLE_DEVICES="")
        command = [sys.executable, __file__, "--worker", str(jobs_path), str(out_path)]
        pipes = dict(stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        processes.append(subprocess.Popen(command, env=env, **pipes))
    for process in processes:
        _, err = process.communicate(timeout=1800)
        if process.returncode:
            raise RuntimeError(f"a rank of the {size}-process group failed:\n{err[-3000:]}")
    return pickle.loads(out_path.read_bytes())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--iters", type=int, default=60)
    parser.add_argument("--resume-at", type=int, default=20)
    parser.add_argument("--tail", type=int, default=10)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return 0
    iters, at = args.iters, args.resume_at
    with tempfile.TemporaryDirectory(prefix="treadle-elastic-spread-") as name:
        root = Path(name)

        def job(name: str, seed: int = 0, resume: str | None = None) -> dict:
            return dict(
                name=name,
                seed=seed,
                iters=iters,
                every=at,
                resume=resume,
                work_dir=str(root / name),
            )

        saved = str(root / "seed0_at2" / f"iter_{at}.pth")
        runs = run_group(
            2,
            [job(f"seed{s}_at2", s) for s in range(args.seeds)] + [job("resumed_2to2", 0, saved)],
            root,
        )
        runs.update(run_group(1, [job("seed0_at1"), job("resumed_2to1", 0, saved)], root))
        runs.update(run_group(4, [job("seed0_at4"), job("resumed_2to4", 0, saved)], root))
    spread = {k: v for k, v in runs.items() if k.startswith("seed")}
    after = range(at, iters)

    def envelope(curves: list[dict]) -> tuple[dict, dict]:
        return (
            {i: min(curve[i] for curve in curves) for i in after},
            {i: max(curve[i] for curve in curves) for i in after},
        )

    def inside(curve: dict, low: dict, high: dict) -> tuple[int, float]:
        count = sum(low[i] <= curve[i] <= high[i] for i in after)
        outside = max(max(low[i] - curve[i], curve[i] - high[i], 0.0) for i in after)
        return count, outside

    def tail(curve: dict) -> float:
        return sum(curve[i] for i in range(iters - args.tail, iters)) / args.tail

    low, high = envelope(list(spread.values()))
    width = sum(high[i] - low[i] for i in after) / len(after)
    tails = [tail(curve) for curve in spread.values()]
    print(
        f"BatchNorm + dropout, global batch 16, {iters} iterations, checkpoint at {at}; spread: "
        f"{args.seeds} seeds at 2 processes, seed 0 at 1 and 4 ({len(spread)} runs)"
    )
    print(
        f"  uninterrupted runs: last-{args.tail} mean loss {min(tails):.4f} - {max(tails):.4f}; "
        f"envelope (min-max at each iteration) mean width {width:.4f}"
    )
    # The yardstick: how often an uninterrupted run lies inside the envelope of the others.
    alone = []
    for name, curve in spread.items():
        others = [c for n, c in spread.items() if n != name]
        alone.append(inside(curve, *envelope(others)))
    counts = sorted(count for count, _ in alone)
    print(
        f"  each uninterrupted run against the envelope of the other {len(spread) - 1}: "
        f"{counts[0]}-{counts[-1]} of {len(after)} iterations inside (median "
        f"{counts[len(counts) // 2]}), at most {max(o for _, o in alone):.4f} outside"
    )
    for name in ("resumed_2to2", "resumed_2to1", "resumed_2to4"):
        count, outside = inside(runs[name], low, high)
        print(
            f"  {name}: {count}/{len(after)} iterations inside the envelope of all "
            f"{len(spread)}, at most {outside:.4f} outside; last-{args.tail} mean "
            f"{tail(runs[name]):.4f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
