"""Check 2: no host-device sync on the step path. A Runner trains 20 iterations with every hook
due at every step (the message hub receives the losses, the loss watch takes them) and no log
line or checkpoint among them; from the third iteration on, each step from ``before_train_iter``
to the end of ``after_train_iter`` runs inside a window:

- on CUDA, under ``torch.cuda.set_sync_debug_mode('error')``: any synchronizing call (``.item()``,
  a blocking copy, ``cudaStreamSynchronize``) raises;
- on the CPU, where nothing syncs, every read of a tensor's value into Python (``item``,
  ``float``, ``int``, ``bool``, ``tolist``, ``numpy``: what syncs on a device) is counted.

The batches come from a DataLoader that pins memory, copied by a preprocessor with
``non_blocking=True`` (the copy a blocking preprocessor makes waits for the device).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import torch

from gpu_pass_checks.rows import Row, verdict

ITERS = 20
WARMUP = 2  # the first steps build the optimizer's state: not the step path of a long run
READS = ("item", "__float__", "__int__", "__bool__", "tolist", "numpy")


class Window:
    """Whether a step is being watched, and the reads seen while it was."""

    def __init__(self) -> None:
        self.open = False
        self.reads: list[str] = []
        self.steps = 0


@contextlib.contextmanager
def counting_reads(window: Window) -> Iterator[None]:
    """Count the calls of ``READS`` on any tensor made while ``window`` is open."""
    originals = {name: getattr(torch.Tensor, name) for name in READS}

    def counted(name: str, original: Any) -> Any:
        def read(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            if window.open:
                window.reads.append(name)
            return original(self, *args, **kwargs)

        return read

    for name, original in originals.items():
        setattr(torch.Tensor, name, counted(name, original))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(torch.Tensor, name, original)


def window_hooks(window: Window, device: str) -> list[Any]:
    """A hook opening the window before every other ``before_train_iter`` hook and one closing
    it after every other ``after_train_iter`` hook, from iteration ``WARMUP`` on."""
    from treadle.runner.hooks import Hook

    def set_open(is_open: bool) -> None:
        window.open = is_open
        if device == "cuda":
            torch.cuda.set_sync_debug_mode("error" if is_open else "default")

    class OpenWindow(Hook):
        priority = "HIGHEST"

        def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
            if runner.iter >= WARMUP:
                window.steps += 1
                set_open(True)

    class CloseWindow(Hook):
        priority = "LOWEST"

        def after_train_iter(
            self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
        ) -> None:
            set_open(False)

    return [OpenWindow(), CloseWindow()]


def sync_cfg(work_dir: Path, device: str, hooks: list[Any]) -> dict:
    from gpu_pass_checks.toys import dropout_cfg, loader

    return dropout_cfg(
        work_dir,
        device,
        model=dict(
            type="GpuPassDropoutModel",
            data_preprocessor=dict(type="BaseDataPreprocessor", non_blocking=True),
        ),
        # One long epoch: the LoggerHook also logs at the end of each epoch.
        train_dataloader=loader(length=4 * 256, batch_size=4, pin_memory=device == "cuda"),
        train_cfg=dict(by_epoch=False, max_iters=ITERS, val_interval=ITERS + 1),
        val_dataloader=None,
        val_cfg=None,
        val_evaluator=None,
        param_scheduler=dict(type="MultiStepLR", milestones=[10], by_epoch=False),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=1000), checkpoint=None),
        custom_hooks=hooks,
    )


def run(device: str, work_dir: Path) -> list[Row]:
    from treadle.runner.runner import Runner

    window = Window()
    runner = Runner(**sync_cfg(work_dir, device, window_hooks(window, device)))
    error = None
    with counting_reads(window) if device == "cpu" else contextlib.nullcontext():
        try:
            runner.train()
        except RuntimeError as caught:  # sync debug mode's error: the check's finding
            if device != "cuda" or "synchroniz" not in str(caught):
                raise
            error = str(caught).splitlines()[0]
        finally:
            if device == "cuda":
                torch.cuda.set_sync_debug_mode("default")
    if device == "cuda":
        return [
            verdict(
                "host_sync: step path",
                error is None and window.steps == ITERS - WARMUP,
                f"0 syncs in {window.steps} steps" if error is None else "a sync",
                error or f"only {window.steps} of {ITERS - WARMUP} steps were watched",
                "sync debug mode 'error'",
            )
        ]
    kinds = sorted(set(window.reads))
    return [
        verdict(
            "host_sync: step path",
            not window.reads and window.steps == ITERS - WARMUP,
            f"{len(window.reads)} host reads in {window.steps} steps",
            f"tensor reads on the step path: {', '.join(kinds)}"
            if window.reads
            else f"only {window.steps} of {ITERS - WARMUP} steps were watched",
            "CPU analogue: counts item/float/int/bool/tolist/numpy",
        )
    ]
