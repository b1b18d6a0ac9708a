"""Launch to the end of the first training step, for every way a user starts a training, against
a plain PyTorch loop with the same model, data and optimizer (issue 42).

The training is the small one of benchmarks/runner_startup.py (startup_mlp_config.py: an MLP on
random data, validation with a metric, checkpoints, the default hooks; the plain loop is
startup_mlp.py run as a script). Each side is a fresh interpreter, timed by this process from
its start to its exit, which comes at the end of the first optimizer step (a global optimizer
step hook ends the process, so no engine is changed). The sides:

- ``plain PyTorch loop``: DataLoader, the MLP, SGD, to the first step (the floor: 1.00x);
- ``script: Runner.from_cfg``: what an MMEngine project's tools/train.py does with treadle's
  names (``Config.fromfile``, ``Runner.from_cfg(cfg).train()``);
- ``script: Runner(...)``: a script that builds ``Runner(model=..., ...)`` from arguments;
- ``compat: tools/train.py``: ``python -m treadle.compat tools/train.py CONFIG --work-dir DIR``,
  with a minimal MMEngine-style tools/train.py (argument parsing, ``Config.fromfile``, options,
  ``Runner.from_cfg``, ``train()``, as mmpretrain's) that imports ``mmengine``, and the config's
  parts registered through ``mmengine`` names;
- ``treadle train``: the command (``python -m treadle.runner train CONFIG``);
- ``python -c 'import torch'`` for reference.

The sides run in turn, one round after another (``--runs`` rounds after one untimed round that
writes the bytecode), so a slow spell of the machine hits them alike. For wall time and CPU time
(user + system of the process) it prints each side's median, spread (min-max), the ratio of its
median to the plain loop's, and the median of its per-round ratios (each round's time over the
plain loop's in the same round: on a loaded machine the steadier of the two). Where the wall
times spread widely, judge by the CPU ratios.

    python benchmarks/runner_entry_points.py [--runs 15] [--sides plain script compat command]
    python benchmarks/runner_entry_points.py --check     # exit 1 if an entry point is over 1.05x

Goal: every entry point within 1.05x of the plain loop (median of the rounds, wall time;
figures in docs/runner/performance.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

from first_step_timing import Side, Timing, run_once

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "startup_mlp_config.py"
BUDGET = 1.05
PLAIN = "plain PyTorch loop"

# A minimal tools/train.py of an MMEngine toolbox (as mmpretrain's: parse the arguments, load
# the config, apply the options, build the Runner from it, train).
TOOLS_TRAIN = """
import argparse
import os
import os.path as osp

from mmengine.config import Config, DictAction
from mmengine.runner import Runner


def parse_args():
    parser = argparse.ArgumentParser(description="Train a model")
    parser.add_argument("config", help="train config file path")
    parser.add_argument("--work-dir", help="the dir to save logs and models")
    parser.add_argument("--resume", nargs="?", type=str, const="auto")
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--cfg-options", nargs="+", action=DictAction)
    parser.add_argument(
        "--launcher", choices=["none", "pytorch", "slurm", "mpi"], default="none"
    )
    parser.add_argument("--local_rank", "--local-rank", type=int, default=0)
    args = parser.parse_args()
    if "LOCAL_RANK" not in os.environ:
        os.environ["LOCAL_RANK"] = str(args.local_rank)
    return args


def main():
    args = parse_args()
    cfg = Config.fromfile(args.config)
    cfg.launcher = args.launcher
    if args.cfg_options is not None:
        cfg.merge_from_dict(args.cfg_options)
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    elif cfg.get("work_dir", None) is None:
        cfg.work_dir = osp.join("./work_dirs", osp.splitext(osp.basename(args.config))[0])
    if args.amp:
        cfg.optim_wrapper.type = "AmpOptimWrapper"
    if args.resume == "auto":
        cfg.resume = True
        cfg.load_from = None
    elif args.resume is not None:
        cfg.resume = True
        cfg.load_from = args.resume
    runner = Runner.from_cfg(cfg)
    runner.train()


if __name__ == "__main__":
    main()
"""

# A project's own script on treadle's names: the config, the Runner built from it, train().
SCRIPT_FROM_CFG = """
import sys

from treadle.config import Config
from treadle.runner import Runner

cfg = Config.fromfile(sys.argv[1])
cfg.work_dir = sys.argv[2]
Runner.from_cfg(cfg).train()
sys.exit("training ended without an optimizer step")
"""

# The same training, the Runner built from arguments (the parts imported by the script).
SCRIPT_RUNNER = """
import sys

import startup_mlp  # registers the data set, model and metric
from treadle.runner import Runner

loader = dict(
    num_workers=0,
    collate_fn=dict(type="default_collate"),
    dataset=dict(type="StartupRandomSamples"),
)
runner = Runner(
    model=dict(type="StartupMLP"),
    work_dir=sys.argv[1],
    train_dataloader=dict(loader, batch_size=32, sampler=dict(type="DefaultSampler", shuffle=True)),
    val_dataloader=dict(loader, batch_size=64, sampler=dict(type="DefaultSampler", shuffle=False)),
    val_evaluator=dict(type="StartupAccuracy"),
    train_cfg=dict(by_epoch=True, max_epochs=2, val_interval=1),
    val_cfg=dict(),
    optim_wrapper=dict(type="OptimWrapper", optimizer=dict(type="SGD", lr=0.01)),
    default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1)),
    visualizer=dict(type="Visualizer", vis_backends=[dict(type="LocalVisBackend")]),
    randomness=dict(seed=0),
    env_cfg=dict(dist_cfg=dict(backend="gloo")),
)
runner.train()
sys.exit("training ended without an optimizer step")
"""

SIDE_NAMES = ("torch", "plain", "script", "runner", "compat", "command")


def make_sides(folder: Path, names: list[str]) -> list[Side]:
    """The sides named in ``names`` (see SIDE_NAMES), their scripts written under ``folder``."""
    tools = folder / "tools"
    tools.mkdir()
    (tools / "train.py").write_text(TOOLS_TRAIN)
    (folder / "train_from_cfg.py").write_text(SCRIPT_FROM_CFG)
    (folder / "train_runner.py").write_text(SCRIPT_RUNNER)
    # The config's custom import (startup_mlp) ends the process at the first step; on the
    # Python path for every side, so that no side differs by its path.
    path = os.pathsep.join(filter(None, [str(HERE), os.environ.get("PYTHONPATH")]))
    exit_env = {"STARTUP_EXIT_AT_FIRST_STEP": "1", "PYTHONPATH": path}
    work_dir = ["--work-dir", "{work_dir}"]
    sides = {
        "torch": Side(
            "python -c 'import torch'",
            ["-c", "import torch"],
            {"PYTHONPATH": path},
            needs_done_marker=False,
        ),
        "plain": Side(PLAIN, [str(HERE / "startup_mlp.py")], {"PYTHONPATH": path}),
        "script": Side(
            "script: Runner.from_cfg",
            [str(folder / "train_from_cfg.py"), str(CONFIG), "{work_dir}"],
            exit_env,
        ),
        "runner": Side(
            "script: Runner(...)", [str(folder / "train_runner.py"), "{work_dir}"], exit_env
        ),
        "compat": Side(
            "compat: tools/train.py",
            ["-m", "treadle.compat", str(tools / "train.py"), str(CONFIG), *work_dir],
            {**exit_env, "STARTUP_ENGINE": "mmengine"},
        ),
        "command": Side(
            "treadle train",
            ["-m", "treadle.runner", "train", str(CONFIG), *work_dir, "--no-progress"],
            exit_env,
        ),
    }
    return [sides[name] for name in SIDE_NAMES if name in names]


def time_rounds(sides: list[Side], runs: int) -> dict[str, list[Timing]]:
    """``runs`` rounds of every side in turn, after one untimed round (bytecode written, files
    cached). A side that fails is dropped; its error is printed."""
    alive = [side for side in sides if run_once(side) is not None]
    times: dict[str, list[Timing]] = {side.label: [] for side in alive}
    for done in range(runs):
        for side in list(alive):
            timing = run_once(side)
            if timing is None:
                alive.remove(side)
                times.pop(side.label)
            else:
                times[side.label].append(timing)
        print(f"  round {done + 1}/{runs} done", file=sys.stderr, flush=True)
    return times


def ratios(times: dict[str, list[Timing]], kind: str) -> dict[str, tuple[float, float]]:
    """For each side: (its median over the plain loop's median, the median of its per-round
    ratios to the plain loop)."""
    plain = [getattr(t, kind) for t in times[PLAIN]]
    found = {}
    for label, runs in times.items():
        values = [getattr(t, kind) for t in runs]
        by_round = [value / base for value, base in zip(values, plain, strict=True)]
        found[label] = (
            statistics.median(values) / statistics.median(plain),
            statistics.median(by_round),
        )
    return found


def report(times: dict[str, list[Timing]]) -> dict[str, float]:
    """Print the table; returns each side's median per-round wall ratio to the plain loop."""
    result = {}
    for kind in ("wall", "cpu"):
        print(f"  {kind} time:")
        found = ratios(times, kind) if PLAIN in times else {}
        for label, runs in times.items():
            values = [getattr(t, kind) for t in runs]
            line = (
                f"    {label:<26} {statistics.median(values) * 1000:6.0f} ms median "
                f"({min(values) * 1000:.0f}-{max(values) * 1000:.0f}, {len(values)} runs)"
            )
            if label in found and label != PLAIN:
                of_medians, by_round = found[label]
                line += f"   {of_medians:5.3f}x the plain loop (by round {by_round:5.3f}x)"
                if kind == "wall":
                    result[label] = by_round
            print(line)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="timed rounds of every side")
    parser.add_argument(
        "--sides",
        nargs="+",
        choices=SIDE_NAMES,
        default=["torch", "plain", "script", "runner", "compat", "command"],
    )
    parser.add_argument("--check", action="store_true", help=f"exit 1 if over {BUDGET}x")
    args = parser.parse_args()
    if "plain" not in args.sides:
        parser.error("the plain loop is the baseline: keep 'plain' in --sides")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"launch to the end of the first step, {CONFIG.name} (small MLP), {args.runs} rounds, "
        f"{os.cpu_count()} cores, load average {load:.1f} at the start:"
    )
    with tempfile.TemporaryDirectory(prefix="treadle-entry-") as folder:
        times = time_rounds(make_sides(Path(folder), args.sides), args.runs)
    if PLAIN not in times:
        print("the plain loop failed: no ratios")
        return 1
    by_round = report(times)
    over = {
        label: ratio for label, ratio in by_round.items() if label != "python -c 'import torch'"
    }
    over = {label: ratio for label, ratio in over.items() if ratio > BUDGET}
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"  load average {load:.1f} at the end; budget {BUDGET}x the plain loop (wall, by round)")
    for label, ratio in over.items():
        print(f"  OVER: {label} {ratio:.3f}x")
    return 1 if over and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
