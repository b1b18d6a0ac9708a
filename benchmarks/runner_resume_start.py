"""Resume that starts at once: the time from the command to the first new training iteration
of an iteration-based run, started fresh and resumed at 10% and at 90% of an epoch, with
treadle and, where installed, MMEngine 0.10 on the same config.

The data set's items take 1 ms each to load (a sleep, as reading a file would), 5,000
iterations make an epoch (batch size 1). A run that replays the batches it has already
trained on before going on (MMEngine's IterBasedTrainLoop) pays 1 ms for each of them; treadle
puts the sampler at its saved position and reads only the next batch.

Each figure is the best of ``--runs`` fresh interpreters, timed from starting the process to
the end of its first optimizer step: the child registers a global optimizer step hook
(``torch.optim.optimizer.register_optimizer_step_post_hook``) that ends the process there.
treadle's side runs the ``treadle train`` command's ``main`` (``train CONFIG --resume CKPT``);
MMEngine's what an MMEngine project's tools/train.py does (``Config.fromfile``, ``load_from``
and ``resume``, ``Runner.from_cfg(cfg).train()``). The checkpoints are written first, by each
engine for itself, with the items' load time set to 0 (the same data otherwise).

    python benchmarks/runner_resume_start.py [--quick] [--runs 3] [--check]
    hatch run mmengine:python benchmarks/runner_resume_start.py     # adds MMEngine

Budget: treadle's resume at 90% ≤ 1.2× its fresh start (``--check`` exits 1 when over).
``--quick``: 500 iterations an epoch, one run each (a CI-size check of the same thing).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BUDGET = 1.2
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
# MMEngine 0.10.7 calls torch.load without weights_only, which torch >= 2.6 defaults to True:
# its resume fails on its own checkpoints without this switch (treadle passes weights_only).
MMENGINE_ENV = {**ENV, "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}

# -- the toys, registered in the registries of the engine a child runs --------------------------


def register(engine: str) -> None:
    """Register ``ResumeBenchDataset`` and ``ResumeBenchModel`` in ``engine``'s registries
    ('treadle' or 'mmengine'); the child imports only that engine."""
    import torch
    from torch import nn
    from torch.utils.data import Dataset

    if engine == "treadle":
        from treadle.runner.model import BaseModel
        from treadle.runner.registry import DATASETS, MODELS
    else:
        from mmengine.model import BaseModel
        from mmengine.registry import DATASETS, MODELS

    class ResumeBenchDataset(Dataset):
        """``length`` samples of 8 features and a target; each takes ``item_ms`` to load."""

        def __init__(self, length: int, item_ms: float = 1.0) -> None:
            generator = torch.Generator().manual_seed(0)
            self.inputs = torch.randn(length, 8, generator=generator)
            self.targets = self.inputs.sum(dim=1)
            self.item_s = item_ms / 1000

        def __len__(self) -> int:
            return len(self.inputs)

        def __getitem__(self, index: int) -> dict[str, Any]:
            if self.item_s:
                time.sleep(self.item_s)
            return dict(inputs=self.inputs[index], data_samples=self.targets[index])

    class ResumeBenchModel(BaseModel):
        """Linear(8, 1), mean squared error."""

        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.linear = nn.Linear(8, 1)

        def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
            inputs = torch.stack(list(inputs)) if isinstance(inputs, list) else inputs
            outputs = self.linear(inputs).squeeze(-1)
            if mode == "loss":
                targets = torch.stack(list(data_samples))
                return dict(loss=((outputs - targets) ** 2).mean())
            return outputs

    DATASETS.register_module(name="ResumeBenchDataset", module=ResumeBenchDataset, force=True)
    MODELS.register_module(name="ResumeBenchModel", module=ResumeBenchModel, force=True)


def config_text(
    per_epoch: int, batch_size: int, item_ms: float, max_iters: int, every: int, **extra: object
) -> str:
    """The config both engines run: IterBasedTrainLoop, DefaultSampler (shuffled), no
    validation, a checkpoint every ``every`` iterations; ``extra`` adds top-level keys."""
    cfg = dict(
        model=dict(type="ResumeBenchModel"),
        train_dataloader=dict(
            dataset=dict(type="ResumeBenchDataset", length=per_epoch * batch_size, item_ms=item_ms),
            sampler=dict(type="DefaultSampler", shuffle=True),
            batch_size=batch_size,
            num_workers=0,
        ),
        optim_wrapper=dict(type="OptimWrapper", optimizer=dict(type="SGD", lr=0.001)),
        train_cfg=dict(by_epoch=False, max_iters=max_iters),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=every),
            checkpoint=dict(type="CheckpointHook", interval=every, by_epoch=False),
        ),
        log_processor=dict(by_epoch=False),
        randomness=dict(seed=0),
        **extra,
    )
    return "".join(f"{key} = {value!r}\n" for key, value in cfg.items())


# -- the children ------------------------------------------------------------------------------

# End the process as soon as the first optimizer step is done.
EXIT_AT_FIRST_STEP = """
import os, sys
from torch.optim.optimizer import register_optimizer_step_post_hook
def _first_step_done(optimizer, args, kwargs):
    sys.stdout.write("\\nFIRST STEP DONE\\n"); sys.stdout.flush(); sys.stderr.flush()
    os._exit(0)
register_optimizer_step_post_hook(_first_step_done)
"""

TREADLE = """
sys.path.insert(0, {benchmarks!r})
import runner_resume_start
runner_resume_start.register("treadle")
from treadle.runner.cli.main import main
argv = ["train", {config!r}, "--work-dir", {work_dir!r}, "--no-progress"]
if {checkpoint!r}:
    argv += ["--resume", {checkpoint!r}]
sys.exit(main(argv))
"""

MMENGINE = """
sys.path.insert(0, {benchmarks!r})
import runner_resume_start
runner_resume_start.register("mmengine")
from mmengine.config import Config
from mmengine.runner import Runner
cfg = Config.fromfile({config!r})
cfg.work_dir = {work_dir!r}
if {checkpoint!r}:
    cfg.load_from, cfg.resume = {checkpoint!r}, True
Runner.from_cfg(cfg).train()
"""

SIDES = {"treadle train": TREADLE, "mmengine Runner.from_cfg": MMENGINE}


def run_child(code: str, config: Path, work_dir: Path, checkpoint: str, first_step: bool) -> float:
    """Seconds from starting the child to its end (its first optimizer step when
    ``first_step``); raises with the child's output when it fails."""
    text = code.format(
        benchmarks=str(HERE), config=str(config), work_dir=str(work_dir), checkpoint=checkpoint
    )
    text = (EXIT_AT_FIRST_STEP if first_step else "import sys\n") + text
    start = time.perf_counter()
    env = MMENGINE_ENV if code is MMENGINE else ENV
    done = subprocess.run([sys.executable, "-c", text], env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0 or (first_step and "FIRST STEP DONE" not in done.stdout):
        raise RuntimeError(f"the child failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return elapsed


def prepare(code: str, root: Path, per_epoch: int, batch_size: int) -> dict[str, str]:
    """Train to 90% of the epoch with items that load at once, a checkpoint every 10%: the
    checkpoints at 10% and at 90%."""
    tenth = per_epoch // 10
    config = root / "prepare.py"
    config.write_text(config_text(per_epoch, batch_size, 0.0, 9 * tenth, tenth))
    run_child(code, config, root / "prepare", "", first_step=False)
    found = {}
    for label, iteration in (("10%", tenth), ("90%", 9 * tenth)):
        path = root / "prepare" / f"iter_{iteration}.pth"
        if not path.exists():
            raise RuntimeError(f"the preparing run wrote no {path}")
        found[label] = str(path)
    return found


def measure(code: str, per_epoch: int, batch_size: int, item_ms: float, runs: int) -> dict:
    """Best seconds to the first new iteration: fresh, resumed at 10% and at 90%."""
    with tempfile.TemporaryDirectory(prefix="treadle-resume-start-") as name:
        root = Path(name)
        checkpoints = prepare(code, root, per_epoch, batch_size)
        config = root / "timed.py"
        config.write_text(config_text(per_epoch, batch_size, item_ms, 2 * per_epoch, per_epoch))
        starts = {"fresh": "", **{f"resume@{k}": v for k, v in checkpoints.items()}}
        best = dict.fromkeys(starts, float("inf"))
        for run in range(runs):  # alternate, so that a slow spell of the machine hits all
            for label, checkpoint in starts.items():
                work_dir = root / f"{label}_{run}"
                seconds = run_child(code, config, work_dir, checkpoint, first_step=True)
                best[label] = min(best[label], seconds)
        return best


def has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="500 iterations an epoch, 1 run")
    parser.add_argument("--runs", type=int, default=None, help="interpreters per figure (3)")
    parser.add_argument("--per-epoch", type=int, default=None, help="iterations an epoch (5000)")
    parser.add_argument("--batch-size", type=int, default=1)
    parser.add_argument("--item-ms", type=float, default=1.0, help="load time of one item")
    parser.add_argument("--check", action="store_true", help="exit 1 if over the budget")
    args = parser.parse_args()
    per_epoch = args.per_epoch or (500 if args.quick else 5000)
    runs = args.runs or (1 if args.quick else 3)
    if per_epoch < 10:
        parser.error(f"--per-epoch must be at least 10, got {per_epoch}")

    sides = {"treadle train": TREADLE}
    if has("mmengine"):
        sides["mmengine Runner.from_cfg"] = MMENGINE
    else:
        print("(mmengine is not installed here: treadle's figures only)")
    print(
        f"from the command to the first new iteration: IterBasedTrainLoop, {per_epoch} "
        f"iterations an epoch, batch {args.batch_size}, {args.item_ms:g} ms an item, "
        f"best of {runs}"
    )
    print(f"  {'':<26} {'fresh':>10} {'resume@10%':>12} {'resume@90%':>12} {'90%/fresh':>10}")
    over = False
    for label, code in sides.items():
        best = measure(code, per_epoch, args.batch_size, args.item_ms, runs)
        ratio = best["resume@90%"] / best["fresh"]
        line = (
            f"  {label:<26} {best['fresh'] * 1000:7.0f} ms {best['resume@10%'] * 1000:9.0f} ms "
            f"{best['resume@90%'] * 1000:9.0f} ms {ratio:9.2f}x"
        )
        if label.startswith("treadle"):
            ok = ratio <= BUDGET
            over = not ok
            line += f"   budget {BUDGET:g}x {'ok' if ok else 'OVER'}"
        print(line, flush=True)
    return 1 if over and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
