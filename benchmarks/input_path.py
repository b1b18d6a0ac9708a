"""The device input path: treadle's train step against a naive loop that copies each batch to
the device synchronously, on the same data, model and optimizer.

Both sides read the same kind of DataLoader: 32x32 images with their labels, collated by
``default_collate`` in DataLoader workers, in pinned memory (on a GPU). The sides:

- naive:   ``for batch in loader: inputs = batch['inputs'].to(device)`` (a blocking copy, behind
  the previous step's kernels), then forward, backward, SGD step;
- treadle: ``treadle.runner.Runner`` with its defaults: each batch is copied on a side stream
  ahead of its step (train_cfg.device_prefetch, loops/device_prefetch.py), the next one read
  ahead while the current step computes;
- treadle-sync: the same Runner with ``device_prefetch=False`` (the data preprocessor copies
  the batch inside ``train_step``): what the side stream is worth.

The model is the small ResNet-like conv net of benchmarks/convnet.py (width 64), batch 128.
Goal on a GPU: treadle's step at most 0.97x the naive loop's. On the CPU there is nothing to
copy (every side reads the batch where it is): the figures say what the engine costs there, not
what the input path is worth. The sides take turns epoch by epoch (runner_step_overhead.py's
baton); the first epoch of each is warm-up; the first quartile of the others over the steps
gives the time per step.

    python benchmarks/input_path.py --device cuda
    python benchmarks/input_path.py --device cpu     # small sizes; informational
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
import tempfile
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from convnet import CLASSES, make_convnet
from runner_step_overhead import Baton, EpochClock, clock_hooks, quartile, take_turns

GOAL = 0.97
LR, MOMENTUM = 0.01, 0.9
SIDES = ("naive", "treadle", "treadle-sync")


@dataclass(frozen=True)
class Setup:
    """One size of the benchmark."""

    batch_size: int = 128
    image_size: int = 32
    width: int = 64
    steps_per_epoch: int = 40
    epochs: int = 6
    workers: int = 4
    pin_memory: bool = True


CUDA_SETUP = Setup()
# The CPU analogue: small enough for one shared core; no workers (their start-up would be most
# of an epoch), no pinned memory (there is no device to copy to).
CPU_SETUP = Setup(
    batch_size=16, image_size=16, width=8, steps_per_epoch=10, epochs=4, workers=0, pin_memory=False
)


class Images(torch.utils.data.Dataset):
    """``count`` random images and labels, drawn once from a seed; items are dicts."""

    def __init__(self, count: int, image_size: int, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.images = torch.randn(count, 3, image_size, image_size, generator=generator)
        self.labels = torch.randint(CLASSES, (count,), generator=generator)

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return {"inputs": self.images[index], "data_samples": self.labels[index]}


def make_loader(setup: Setup) -> torch.utils.data.DataLoader:
    """The same loader for every side: default_collate in workers, pinned batches on a GPU."""
    dataset = Images(setup.batch_size * setup.steps_per_epoch, setup.image_size)
    return torch.utils.data.DataLoader(
        dataset,
        batch_size=setup.batch_size,
        shuffle=False,
        num_workers=setup.workers,
        persistent_workers=setup.workers > 0,
        pin_memory=setup.pin_memory,
        drop_last=True,
    )


def sgd(parameters: Any) -> torch.optim.SGD:
    return torch.optim.SGD(parameters, lr=LR, momentum=MOMENTUM)


def run_naive(setup: Setup, clock: EpochClock, device: str, work_dir: str, found: dict) -> None:
    model = make_convnet(setup.width, device=device)
    optimizer = sgd(model.parameters())
    loader = make_loader(setup)
    for _ in range(setup.epochs):
        clock.start()
        model.train()
        for batch in loader:
            inputs = batch["inputs"].to(device)  # blocking: waits for the previous step
            labels = batch["data_samples"].to(device)
            loss = nn.functional.cross_entropy(model(inputs), labels)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        clock.end(device)


def engine_model(setup: Setup, device: str) -> nn.Module:
    from treadle.runner.model import BaseModel

    class ConvNet(BaseModel):
        def __init__(self) -> None:
            super().__init__()
            self.net = make_convnet(setup.width, device=device)

        def forward(self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor"):
            logits = self.net(inputs)
            if mode == "loss":
                return {"loss": nn.functional.cross_entropy(logits, data_samples)}
            return logits

    return ConvNet()


def run_treadle(
    setup: Setup,
    clock: EpochClock,
    device: str,
    work_dir: str,
    found: dict,
    name: str = "treadle",
    prefetch: bool | None = None,
) -> None:
    from treadle.runner.hooks import Hook
    from treadle.runner.runner import Runner

    train_cfg: dict[str, Any] = dict(by_epoch=True, max_epochs=setup.epochs)
    if prefetch is not None:
        train_cfg["device_prefetch"] = prefetch
    runner = Runner(
        model=engine_model(setup, device),
        work_dir=os.path.join(work_dir, name),
        train_dataloader=make_loader(setup),
        train_cfg=train_cfg,
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=LR, momentum=MOMENTUM)),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=50)),
        custom_hooks=clock_hooks(Hook, clock, device),
        experiment_name=f"bench-input-{name}-{uuid.uuid4().hex[:8]}",
    )
    runner.train()
    plan = runner.train_loop.__dict__.get("_device_prefetch_plan")
    found[name] = dict(
        prefetch=plan is not None and plan.side.device.type != "cpu",
        read_ahead=bool(plan is not None and plan.read_ahead),
    )


RUNS = {
    "naive": run_naive,
    "treadle": run_treadle,
    "treadle-sync": lambda *args: run_treadle(*args, name="treadle-sync", prefetch=False),
}


@dataclass
class Result:
    """Seconds per step of each side that finished, and what the engine sides did."""

    per_step: dict[str, float]
    plans: dict[str, dict]
    errors: dict[str, str]

    def ratio(self, side: str = "treadle") -> float | None:
        if side not in self.per_step or "naive" not in self.per_step:
            return None
        return self.per_step[side] / self.per_step["naive"]


def measure(setup: Setup, device: str, sides: tuple[str, ...] = SIDES) -> Result:
    """Run the sides in turns (see the module's docstring)."""
    baton = Baton(list(sides))
    clocks = {name: EpochClock(name, baton) for name in sides}
    plans: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="treadle-input-path-") as work_dir:

        def run(name: str) -> None:
            RUNS[name](setup, clocks[name], device, work_dir, plans)

        raised = take_turns(baton, {name: functools.partial(run, name) for name in sides})
    errors = {name: f"{type(error).__name__}: {error}" for name, error in raised.items()}
    per_step = {
        name: quartile(clock.epochs[1:]) / setup.steps_per_epoch
        for name, clock in clocks.items()
        if name not in errors and len(clock.epochs) >= 2
    }
    return Result(per_step, plans, errors)


def setup_for(device: str, **changes: Any) -> Setup:
    return replace(CUDA_SETUP if device != "cpu" else CPU_SETUP, **changes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--steps-per-epoch", type=int)
    args = parser.parse_args(argv)
    changes = {
        key: value
        for key, value in (("epochs", args.epochs), ("steps_per_epoch", args.steps_per_epoch))
        if value is not None
    }
    setup = setup_for(args.device, **changes)
    result = measure(setup, args.device)
    print(
        f"\nsmall ResNet width {setup.width}, batch {setup.batch_size}, "
        f"{setup.image_size}x{setup.image_size} images, {setup.workers} workers, pinned memory "
        f"{setup.pin_memory}, {setup.steps_per_epoch} steps/epoch, {args.device}"
    )
    for name in SIDES:
        if name in result.errors:
            print(f"  {name:<13} failed: {result.errors[name]}")
            continue
        ratio = result.ratio(name) if name != "naive" else 1.0
        plan = result.plans.get(name, {})
        note = ""
        if plan:
            note = f"   prefetch {'on' if plan['prefetch'] else 'off'}"
            note += ", read ahead" if plan["read_ahead"] else ""
        print(f"  {name:<13} {result.per_step[name] * 1e6:9.1f} us/step   ratio {ratio:.3f}{note}")
    ratio = result.ratio()
    if args.device == "cpu":
        print("CPU: nothing is copied to a device here; the goal applies on a GPU only")
        return 0
    ok = ratio is not None and ratio <= GOAL
    print(f"goal: treadle <= {GOAL:.2f}x naive: {'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
