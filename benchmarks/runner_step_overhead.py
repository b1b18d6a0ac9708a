"""What a training engine adds to each step, against plain PyTorch in the same run.

The same MLP (benchmarks/mlp.py), the same ready-made batches served by the same kind of
DataLoader, and the same SGD, trained by:

- plain:     ``for batch in loader: loss = ...; loss.backward(); opt.step(); opt.zero_grad()``
- model-api: the same loop, calling the model as the MMEngine API does and nothing else:
  ``losses = model(**batch, mode='loss')`` on a BaseModel, the loss to log detached: the
  forward as that API calls it, without its data preprocessor and optimizer wrapper.
- train-step: the same loop calling ``model.train_step(batch, optim_wrapper)`` on treadle's
  BaseModel and OptimWrapper: MMEngine's whole model API (data preprocessor, dict of losses,
  optimizer wrapper) without a runner, the floor of any runner built on that API
- treadle:   ``treadle.runner.Runner`` (default hooks on, LoggerHook interval 50)
- user-hook: the same Runner with one more hook, a user's that implements ``after_train_iter``
  (as most do): every hook is then due at every step, as in MMEngine's Runner. Its line also
  says how much it adds to ``treadle`` (budget: 0.03x)
- mmengine:  ``mmengine.runner.Runner``, configured the same (where mmengine is installed)
- lightning: ``lightning.Trainer`` with its defaults but no progress bar (the runners draw
  none either), ``log_every_n_steps=50``, the loss logged with ``self.log`` (where lightning
  is installed)
- with ``--anatomy``, what the parts cost in place: the plain loop calling
  ``model.train_step(batch, optim_wrapper)`` on MMEngine's BaseModel and OptimWrapper
  (``mm-train-step``, where mmengine is installed), then treadle's Runner with every default
  hook off (``no-hooks``: the loop, ``train_step`` and the optimizer wrapper) and without its
  LoggerHook (``no-logger``)

Each side runs in its own thread and the threads take turns, one epoch each, handing a baton
on at the start of each epoch: only one side runs at any time, and a busy spell of the machine
falls on all of them alike. An epoch is timed from its start hook (which runs after every other
``before_train_epoch`` hook) to its end hook (which runs before every other
``after_train_epoch`` hook, so the checkpoint saved at the end of an epoch is not timed, though
the next epoch's first steps, run with cold caches after it, are); the first epoch of each side
is warm-up and not counted. The first quartile of the epoch times
(other processes only ever add time) over the step count gives the time per step, and each
engine's ratio to plain PyTorch is printed. ``--repeats N`` runs the whole comparison N times
and prints the median ratio of each side with its spread (lowest-highest); ``--clock thread``
times each epoch with its thread's CPU time instead of the wall clock (a side runs in one
thread with one intra-op thread, so this leaves out the time other processes of a shared
machine take from it; the wall clock is the default, and what a user waits).

    python benchmarks/runner_step_overhead.py [--epochs N] [--steps-per-epoch N] [--threads 1]
        [--sizes tiny big] [--sides plain model-api treadle ...] [--anatomy] [--repeats N]
        [--clock wall|thread]
    hatch run mmengine:python benchmarks/runner_step_overhead.py     # adds MMEngine
    hatch run lightning:python benchmarks/runner_step_overhead.py    # adds Lightning
    python benchmarks/runner_step_overhead.py --anatomy              # the costs of the parts
    python benchmarks/runner_step_overhead.py --device cuda          # on a GPU

Sizes: ``tiny`` is 32→64→10 with batch 64 (the engine's cost is most of a step), ``big``
is 512→2048→10 with batch 64. Budgets for treadle on the CPU: ≤ 1.20× and ≤ 1.02× (on a
GPU, 1.05× for tiny), and ``user-hook`` at most 0.03× above ``treadle``. ``conv`` (asked for
by name: ``--sizes conv``; the GPU verification pass measures it) is the small ResNet-like
conv net of benchmarks/convnet.py on 32×32 images, batch 64, budget ≤ 1.02× on a GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import importlib.util
import os
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

# One intra-op thread unless asked otherwise; set before torch starts its pool.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch
from convnet import make_convnet, make_image_batch
from mlp import make_batch, make_mlp
from torch import nn


@dataclass(frozen=True)
class Size:
    """One model size of the benchmark."""

    name: str
    in_features: int
    hidden: int
    epochs: int
    # treadle's budget on a GPU, and on the CPU (where MMEngine's model API alone costs more
    # than the GPU budget on the tiny MLP: see the train-step side).
    budget: float
    cpu_budget: float
    # Short epochs let the sides take turns often; long ones keep the per-epoch work (a new
    # DataLoader iterator, the epoch hooks) from weighing as it would not in a real training.
    steps_per_epoch: int = 50
    batch_size: int = 64
    classes: int = 10
    # 'mlp': in_features -> hidden -> classes; 'conv': benchmarks/convnet.py with
    # in_features channels, hidden channels in its first stage, on image_size² images.
    network: str = "mlp"
    image_size: int = 32


SIZES = {
    "tiny": Size("tiny", 32, 64, epochs=21, budget=1.05, cpu_budget=1.20, steps_per_epoch=200),
    "big": Size("big", 512, 2048, epochs=13, budget=1.02, cpu_budget=1.02),
    "conv": Size("conv", 3, 64, epochs=13, budget=1.02, cpu_budget=1.02, network="conv"),
}
# How much more than the default case the user-hook side may cost (in ratio to plain).
USER_HOOK_BUDGET = 0.03
DEFAULT_SIZES = ["tiny", "big"]
LOG_INTERVAL = 50
LR, MOMENTUM = 0.01, 0.9


def has(module: str) -> bool:
    """Whether ``module`` (``package.module:Name`` for a name inside it) can be imported."""
    module, _, name = module.partition(":")
    try:
        if importlib.util.find_spec(module) is None:
            return False
    except ModuleNotFoundError:
        return False
    if not name:
        return True
    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


# --------------------------------------------------------------------------------------------
# The data every side reads: ready-made batches, one per DataLoader item (no collation).


class ReadyBatches(torch.utils.data.Dataset):
    """``count`` batches made once; item ``i`` is batch ``i`` as a dict of tensors."""

    def __init__(self, size: Size, count: int, device: str) -> None:
        self.batches = []
        for index in range(count):
            if size.network == "conv":
                inputs, targets = make_image_batch(
                    size.batch_size,
                    size.image_size,
                    size.in_features,
                    size.classes,
                    seed=index,
                    device=device,
                )
            else:
                inputs, targets = make_batch(
                    size.batch_size, size.in_features, size.classes, seed=index, device=device
                )
            self.batches.append({"inputs": inputs, "targets": targets})

    def __len__(self) -> int:
        return len(self.batches)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return self.batches[index]


def only_item(items: list[Any]) -> Any:
    return items[0]


def make_loader(dataset: ReadyBatches) -> torch.utils.data.DataLoader:
    # Batches of one item, which already is a batch: nothing is copied on the way. (MMEngine's
    # loop needs a batch sampler, so batch_size=None would not do.)
    return torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=False, collate_fn=only_item)


def make_model(size: Size, device: str) -> nn.Sequential:
    if size.network == "conv":
        return make_convnet(size.hidden, size.in_features, size.classes, device=device)
    return make_mlp(size.in_features, size.hidden, depth=1, classes=size.classes, device=device)


def sgd(parameters: Any) -> torch.optim.SGD:
    return torch.optim.SGD(parameters, lr=LR, momentum=MOMENTUM)


# --------------------------------------------------------------------------------------------
# Turns: only the thread holding the baton runs.


class Baton:
    """Round-robin turns between named threads."""

    def __init__(self, names: list[str]) -> None:
        self._order = list(names)
        self._turn = 0
        self._condition = threading.Condition()

    def wait(self, name: str) -> None:
        with self._condition:
            self._condition.wait_for(lambda: self._order[self._turn] == name)

    def pass_and_wait(self, name: str) -> None:
        with self._condition:
            self._turn = (self._turn + 1) % len(self._order)
            self._condition.notify_all()
            self._condition.wait_for(lambda: self._order[self._turn] == name)

    def leave(self, name: str) -> None:
        with self._condition:
            index = self._order.index(name)
            self._order.pop(index)
            if self._order and (index < self._turn or self._turn >= len(self._order)):
                self._turn = (self._turn - (index < self._turn)) % len(self._order)
            self._condition.notify_all()


def take_turns(baton: Baton, runs: dict[str, Callable[[], None]]) -> dict[str, BaseException]:
    """Each run in a thread of its own, one at a time through ``baton``; what each raised, by
    name (reported once all have finished, so one failing side does not stop the others)."""
    errors: dict[str, BaseException] = {}

    def body(name: str) -> None:
        baton.wait(name)
        try:
            runs[name]()
        except BaseException as error:
            errors[name] = error
        finally:
            baton.leave(name)

    workers = [threading.Thread(target=body, args=(name,), name=name) for name in runs]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return errors


@dataclass
class EpochClock:
    """Start and end of each epoch of one side, taking turns through the baton."""

    name: str
    baton: Baton
    # time.perf_counter (the wall clock) or time.thread_time (the side's CPU time: called in
    # the side's own thread, where its steps run).
    timer: Callable[[], float] = time.perf_counter
    epochs: list[float] = field(default_factory=list)
    _start: float = 0.0

    def start(self) -> None:
        self.baton.pass_and_wait(self.name)
        self._start = self.timer()

    def end(self, device: str) -> None:
        if device != "cpu":
            torch.cuda.synchronize()
        self.epochs.append(self.timer() - self._start)


# --------------------------------------------------------------------------------------------
# The sides. Each ``run_*`` trains ``epochs`` epochs, calling clock.start/clock.end around each.


def run_plain(size: Size, clock: EpochClock, epochs: int, device: str, work_dir: str) -> None:
    model = make_model(size, device)
    optimizer = sgd(model.parameters())
    loader = make_loader(ReadyBatches(size, size.steps_per_epoch, device))
    loss_fn = nn.functional.cross_entropy
    for _ in range(epochs):
        clock.start()
        model.train()
        for batch in loader:
            loss = loss_fn(model(batch["inputs"]), batch["targets"])
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        clock.end(device)


def run_model_api(size: Size, clock: EpochClock, epochs: int, device: str, work_dir: str) -> None:
    from treadle.runner.model import BaseModel

    model = engine_model(BaseModel, size, device)
    optimizer = sgd(model.parameters())
    loader = make_loader(ReadyBatches(size, size.steps_per_epoch, device))
    for _ in range(epochs):
        clock.start()
        model.train()
        for batch in loader:
            loss = model(**batch, mode="loss")["loss"]
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            _ = {"loss": loss.detach()}  # what a train step hands to logging
        clock.end(device)


def train_step_loop(
    base_model: type,
    optim_wrapper_type: type,
    size: Size,
    clock: EpochClock,
    epochs: int,
    device: str,
) -> None:
    """The plain loop calling ``model.train_step(batch, optim_wrapper)``: the model API's whole
    step (data preprocessor, forward, losses, optimizer wrapper) and nothing of an engine."""
    model = engine_model(base_model, size, device)
    optim_wrapper = optim_wrapper_type(sgd(model.parameters()))
    loader = make_loader(ReadyBatches(size, size.steps_per_epoch, device))
    for _ in range(epochs):
        clock.start()
        model.train()
        for batch in loader:
            model.train_step(batch, optim_wrapper)
        clock.end(device)


def run_train_step(size: Size, clock: EpochClock, epochs: int, device: str, work_dir: str) -> None:
    from treadle.runner.model import BaseModel
    from treadle.runner.optim import OptimWrapper

    train_step_loop(BaseModel, OptimWrapper, size, clock, epochs, device)


def run_mmengine_train_step(
    size: Size, clock: EpochClock, epochs: int, device: str, work_dir: str
) -> None:
    from mmengine.model import BaseModel
    from mmengine.optim import OptimWrapper

    train_step_loop(BaseModel, OptimWrapper, size, clock, epochs, device)


def runner_kwargs(size: Size, epochs: int, device: str, work_dir: str, name: str) -> dict:
    """What the treadle and MMEngine runners are given: the same on both."""
    return dict(
        work_dir=os.path.join(work_dir, name),
        train_dataloader=make_loader(ReadyBatches(size, size.steps_per_epoch, device)),
        train_cfg=dict(by_epoch=True, max_epochs=epochs),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=LR, momentum=MOMENTUM)),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=LOG_INTERVAL)),
        experiment_name=f"bench-{name}-{size.name}-{uuid.uuid4().hex[:8]}",
    )


def clock_hooks(hook_base: type, clock: EpochClock, device: str) -> list[Any]:
    """Two hooks on ``hook_base``: one starting the clock after every other
    ``before_train_epoch`` hook, one stopping it before every other ``after_train_epoch``."""

    class StartClock(hook_base):
        priority = "LOWEST"

        def before_train_epoch(self, runner: Any) -> None:
            clock.start()

    class StopClock(hook_base):
        priority = "HIGHEST"

        def after_train_epoch(self, runner: Any) -> None:
            clock.end(device)

    return [StartClock(), StopClock()]


def engine_model(base_model: type, size: Size, device: str) -> nn.Module:
    """The MLP inside the engine's BaseModel: ``forward(inputs, targets, mode)``."""

    class MLP(base_model):
        def __init__(self) -> None:
            super().__init__()
            self.net = make_model(size, device)

        def forward(self, inputs: torch.Tensor, targets: torch.Tensor, mode: str = "tensor") -> Any:
            logits = self.net(inputs)
            if mode == "loss":
                return {"loss": nn.functional.cross_entropy(logits, targets)}
            return logits

    return MLP()


def user_hook(hook_base: type) -> Any:
    """A user's hook on ``hook_base`` implementing ``after_train_iter``, as most do: it counts
    the steps (what it does matters less than that every hook is then due at every step)."""

    class CountSteps(hook_base):
        def __init__(self) -> None:
            self.steps = 0

        def after_train_iter(
            self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
        ) -> None:
            self.steps += 1

    return CountSteps()


def run_treadle(
    size: Size,
    clock: EpochClock,
    epochs: int,
    device: str,
    work_dir: str,
    name: str = "treadle",
    without: tuple[str, ...] = (),
    with_user_hook: bool = False,
) -> None:
    """treadle's Runner; the default hooks named in ``without`` are turned off (None), and
    ``with_user_hook`` adds :func:`user_hook`."""
    from treadle.runner.hooks import Hook
    from treadle.runner.model import BaseModel
    from treadle.runner.runner import Runner

    kwargs = runner_kwargs(size, epochs, device, work_dir, name)
    kwargs["default_hooks"].update(dict.fromkeys(without))
    custom_hooks = clock_hooks(Hook, clock, device)
    if with_user_hook:
        custom_hooks.append(user_hook(Hook))
    runner = Runner(
        model=engine_model(BaseModel, size, device),
        custom_hooks=custom_hooks,
        **kwargs,
    )
    runner.train()


# Turned off in the anatomy side ``no-hooks`` (--anatomy).
DEFAULT_HOOKS = ("runtime_info", "timer", "sampler_seed", "param_scheduler", "logger", "checkpoint")


def run_mmengine(size: Size, clock: EpochClock, epochs: int, device: str, work_dir: str) -> None:
    from mmengine.hooks import Hook
    from mmengine.model import BaseModel
    from mmengine.runner import Runner

    runner = Runner(
        model=engine_model(BaseModel, size, device),
        custom_hooks=clock_hooks(Hook, clock, device),
        **runner_kwargs(size, epochs, device, work_dir, "mmengine"),
    )
    runner.train()


def run_lightning(size: Size, clock: EpochClock, epochs: int, device: str, work_dir: str) -> None:
    import lightning

    class MLP(lightning.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = make_model(size, device)

        def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
            loss = nn.functional.cross_entropy(self.net(batch["inputs"]), batch["targets"])
            self.log("loss", loss)
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return sgd(self.parameters())

    class Clock(lightning.Callback):
        # User callbacks run before Lightning's own ModelCheckpoint, which saves at epoch end.
        def on_train_epoch_start(self, trainer: Any, module: Any) -> None:
            clock.start()

        def on_train_epoch_end(self, trainer: Any, module: Any) -> None:
            clock.end(device)

    trainer = lightning.Trainer(
        max_epochs=epochs,
        accelerator="cpu" if device == "cpu" else "gpu",
        devices=1,
        default_root_dir=os.path.join(work_dir, "lightning"),
        log_every_n_steps=LOG_INTERVAL,
        callbacks=[Clock()],
        enable_model_summary=False,
        # The Runners print a line every 50 steps and draw no bar: neither does Lightning here.
        enable_progress_bar=False,
        num_sanity_val_steps=0,
    )
    trainer.fit(
        MLP(), train_dataloaders=make_loader(ReadyBatches(size, size.steps_per_epoch, device))
    )


SIDES: dict[str, tuple[Callable[..., None], str]] = {
    "plain": (run_plain, "torch"),
    "model-api": (run_model_api, "treadle.runner.model:BaseModel"),
    "train-step": (run_train_step, "treadle.runner.model:BaseModel"),
    "treadle": (run_treadle, "treadle.runner.runner:Runner"),
    "user-hook": (
        partial(run_treadle, name="user-hook", with_user_hook=True),
        "treadle.runner.runner:Runner",
    ),
    "mmengine": (run_mmengine, "mmengine"),
    "lightning": (run_lightning, "lightning"),
    "mm-train-step": (run_mmengine_train_step, "mmengine"),
    # The anatomy sides: treadle's Runner with parts of its default work turned off through
    # its public configuration.
    "no-logger": (
        partial(run_treadle, name="no-logger", without=("logger",)),
        "treadle.runner.runner:Runner",
    ),
    "no-hooks": (
        partial(run_treadle, name="no-hooks", without=DEFAULT_HOOKS),
        "treadle.runner.runner:Runner",
    ),
}
ANATOMY = ("mm-train-step", "no-hooks", "no-logger")
NOTES = {
    "model-api": "(the model's forward as MMEngine's API calls it, no engine)",
    "train-step": "(the floor: MMEngine's model API, preprocessor and optim wrapper, no engine)",
    "mm-train-step": "(the plain loop calling MMEngine's BaseModel.train_step, no engine)",
    "no-logger": "(treadle without LoggerHook: no log line, no scalars.json)",
    "no-hooks": "(treadle with every default hook off: loop, train_step, optim wrapper)",
}


def available_sides(asked: list[str] | None, anatomy: bool = False) -> list[str]:
    names = asked or [name for name in SIDES if name not in ANATOMY]
    if anatomy:
        names = [*names, *(name for name in ANATOMY if name not in names)]
    found = []
    for name in names:
        if name not in SIDES:
            raise SystemExit(f"unknown side {name!r}; choose from {', '.join(SIDES)}")
        module = SIDES[name][1]
        if has(module):
            found.append(name)
        else:
            print(f"({name}: {module} is not installed here, skipped)")
    if "plain" not in found:
        found.insert(0, "plain")
    return found


# --------------------------------------------------------------------------------------------


def measure(
    size: Size,
    sides: list[str],
    epochs: int,
    threads: int,
    device: str,
    timer: Callable[[], float] = time.perf_counter,
) -> dict:
    """Per-step seconds of each side: the first quartile of its epoch times after the first
    (other processes only ever add time: the fast epochs are the engine's own cost), over the
    epoch's steps. ``timer`` reads the clock (see EpochClock)."""
    baton = Baton(sides)
    clocks = {name: EpochClock(name, baton, timer) for name in sides}
    with tempfile.TemporaryDirectory(prefix="treadle-bench-") as work_dir:

        def run(name: str) -> None:
            torch.set_num_threads(threads)
            SIDES[name][0](size, clocks[name], epochs, device, work_dir)

        errors = take_turns(baton, {name: functools.partial(run, name) for name in sides})

    for name, error in errors.items():
        print(f"{name} failed: {type(error).__name__}: {error}", file=sys.stderr)
    per_step = {}
    for name, clock in clocks.items():
        if name in errors or len(clock.epochs) < 2:
            continue
        per_step[name] = quartile(clock.epochs[1:]) / size.steps_per_epoch
    return per_step


def quartile(values: list[float]) -> float:
    """The first quartile (the median where there are too few values to cut in four)."""
    if len(values) < 4:
        return statistics.median(values)
    return statistics.quantiles(values, n=4)[0]


def ratios(runs: list[dict[str, float]], name: str) -> list[float]:
    """``name``'s ratio to plain in each run where both were measured."""
    return [run[name] / run["plain"] for run in runs if name in run and run.get("plain")]


def spread(values: list[float]) -> str:
    """The range of ``values`` where there are several."""
    return f" (range {min(values):.3f}-{max(values):.3f})" if len(values) > 1 else ""


def report(size: Size, runs: list[dict[str, float]], device: str) -> bool:
    """Print one size's table (medians over ``runs``, each a dict of per-step seconds by side);
    False if treadle is over its budget, or the user-hook side over treadle's by more than
    USER_HOOK_BUDGET."""
    title = f"{size.name} MLP {size.in_features}->{size.hidden}->{size.classes}"
    if size.network == "conv":
        title = f"{size.name} conv net, width {size.hidden}, {size.image_size}x{size.image_size}"
    repeats = f", median of {len(runs)} runs" if len(runs) > 1 else ""
    steps = f"{size.steps_per_epoch} steps/epoch"
    print(f"\n{title}, batch {size.batch_size}, {steps}, {device}{repeats}")
    budget = size.cpu_budget if device == "cpu" else size.budget
    within = True
    names = [name for name in SIDES if any(name in run for run in runs)]
    for name in names:
        seconds = statistics.median(run[name] for run in runs if name in run)
        found = ratios(runs, name)
        ratio = statistics.median(found) if found else float("nan")
        line = f"  {name:<13} {seconds * 1e6:10.1f} us/step   ratio {ratio:6.3f}{spread(found)}"
        if name == "treadle":
            ok = ratio <= budget
            within = within and ok
            line += f"   budget {budget:.2f}x {'ok' if ok else 'OVER'}"
        elif name == "user-hook" and ratios(runs, "treadle"):
            # Paired by run: both sides took turns in the same run.
            deltas = [
                run["user-hook"] / run["plain"] - run["treadle"] / run["plain"]
                for run in runs
                if "user-hook" in run and "treadle" in run and run.get("plain")
            ]
            delta = statistics.median(deltas)
            ok = delta <= USER_HOOK_BUDGET
            within = within and ok
            line += (
                f"   {delta:+.3f}x vs treadle{spread(deltas)}, budget "
                f"+{USER_HOOK_BUDGET:.2f}x {'ok' if ok else 'OVER'}"
            )
        elif name in NOTES:
            line += f"   {NOTES[name]}"
        print(line)
    return within


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--epochs",
        type=int,
        help="epochs per side, the first one warm-up (default: 21 of 200 steps for tiny, "
        "13 of 50 steps for big)",
    )
    parser.add_argument(
        "--steps-per-epoch",
        type=int,
        help="batches per epoch (default: 200 for tiny, 50 for big); longer epochs weigh the "
        "per-epoch work (a new iterator, the checkpoint saved at each epoch's end) less",
    )
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--sizes", nargs="+", default=DEFAULT_SIZES, choices=list(SIZES))
    parser.add_argument("--sides", nargs="+", help=f"a subset of {', '.join(SIDES)}")
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument(
        "--anatomy",
        action="store_true",
        help="add the plain loop calling MMEngine's train_step (where it is installed) and "
        "treadle's Runner with every default hook off and without its LoggerHook: what each "
        "part costs in place",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="run the whole comparison this many times and print median ratios with their "
        "range (default 1)",
    )
    parser.add_argument(
        "--clock",
        choices=("wall", "thread"),
        default="wall",
        help="time epochs with the wall clock (default) or the side's thread CPU time (leaves "
        "out what other processes of a shared machine take)",
    )
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if treadle (or user-hook) is over budget"
    )
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    torch.set_num_threads(args.threads)
    sides = available_sides(args.sides, args.anatomy)
    timer = time.thread_time if args.clock == "thread" else time.perf_counter
    print(
        f"torch {torch.__version__}, {args.threads} thread(s), {args.clock} clock, "
        f"sides: {', '.join(sides)}"
    )
    within = True
    results: dict[str, list[dict[str, float]]] = {name: [] for name in args.sizes}
    for _ in range(args.repeats):
        for name in args.sizes:
            size = SIZES[name]
            if args.steps_per_epoch:
                size = SIZES[name] = replace(size, steps_per_epoch=args.steps_per_epoch)
            with contextlib.redirect_stdout(sys.stderr):
                # The engines' log lines go to stderr; the tables below stay on stdout.
                epochs = args.epochs or size.epochs
                results[name].append(measure(size, sides, epochs, args.threads, args.device, timer))
    for name in args.sizes:
        within = report(SIZES[name], results[name], args.device) and within
    return 0 if within or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
