"""Check 3: automatic mixed precision through AmpOptimWrapper.

- fp16 with a dynamic loss scale: a model whose gradients overflow in its first 3 steps
  (tests/support/amp_overflow_toys.py): those steps are skipped and counted, the scale backs off
  by half each time, and the scaler lives on the device;
- fp16 (dynamic scale) and bf16 (no scaler) on the main job's model (examples/digits, 2
  epochs through the Runner, scored on its validation split) and on a small ResNet-like conv net
  (benchmarks/convnet.py, 30 steps over 4 fixed batches): the layers run in the reduced dtype,
  the loss stays finite and falls.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import torch
from torch import nn

from gpu_pass_checks import EXAMPLES
from gpu_pass_checks.rows import Row, skipped, verdict

OVERFLOW_STEPS, OVERFLOW_ITERS = 3, 8
DIGITS_EPOCHS = 2
DIGITS_MIN_TOP1 = 80.0  # percent; fp32 reaches about 90 in 2 epochs
CONV_STEPS, CONV_BATCHES = 30, 4
SHORT = {"float16": "fp16", "bfloat16": "bf16"}


def overflow_row(work_dir: Path, device: str) -> Row:
    from amp_overflow_toys import amp_overflow_cfg, logged, train

    from treadle.runner.runner import Runner

    cfg = amp_overflow_cfg(work_dir, overflow_steps=OVERFLOW_STEPS, max_iters=OVERFLOW_ITERS)
    runner = Runner(**cfg)
    lines, _ = train(runner)
    wrapper = runner.optim_wrapper
    scales = logged(lines, "loss_scale")[: OVERFLOW_STEPS + 1]
    skips = wrapper.skipped_steps
    expected = [2.0**15, 2.0**14, 2.0**13, 2.0**13]
    scale_device = wrapper.loss_scaler._scale.device.type
    ok = skips == OVERFLOW_STEPS and scales == expected and scale_device == device
    return verdict(
        "amp: fp16 overflow skipped and counted",
        ok,
        f"{skips}/{OVERFLOW_STEPS} overflows skipped",
        f"skipped {skips}, scales {scales} (expected {expected}), scale on {scale_device}",
    )


class DtypeProbe:
    """The dtype of the first training forward output of ``layer`` (what autocast chose)."""

    def __init__(self, layer: nn.Module) -> None:
        self.dtype: torch.dtype | None = None
        layer.register_forward_hook(self._record)

    def _record(self, module: nn.Module, args: Any, output: torch.Tensor) -> None:
        if module.training and self.dtype is None:
            self.dtype = output.dtype


def digits_row(work_dir: Path, device: str, dtype: str) -> Row:
    check = f"amp: {SHORT[dtype]} main job (digits)"
    if importlib.util.find_spec("sklearn") is None:
        return skipped(check, "scikit-learn is not installed here (the digits data)")
    from treadle.config import Config
    from treadle.runner.runner import Runner

    folder = EXAMPLES / "digits"
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
    cfg = Config.fromfile(str(folder / "config.py"))
    cfg.work_dir = str(work_dir / f"digits_{dtype}")
    cfg.optim_wrapper = dict(
        type="AmpOptimWrapper", dtype=dtype, optimizer=cfg.optim_wrapper["optimizer"]
    )
    cfg.train_cfg = dict(by_epoch=True, max_epochs=DIGITS_EPOCHS, val_interval=DIGITS_EPOCHS)
    cfg.param_scheduler = [cfg.param_scheduler[0]]  # the warm-up; the cosine spans 20 epochs
    cfg.default_hooks.checkpoint = None
    cfg.custom_hooks = []
    cfg.experiment_name = f"gpu_pass_digits_{dtype}"
    runner = Runner.from_cfg(cfg)
    probe = DtypeProbe(runner.model.net[0])
    runner.train()
    top1 = float(runner.message_hub.get_scalar("val/accuracy/top1").current())
    scaler_on = runner.optim_wrapper.loss_scaler.is_enabled()
    wanted = getattr(torch, dtype)
    ok = probe.dtype == wanted and scaler_on == (dtype == "float16") and top1 >= DIGITS_MIN_TOP1
    return verdict(
        check,
        ok,
        f"top1 {top1:.1f}%",
        f"layers ran in {probe.dtype}, loss scaler {'on' if scaler_on else 'off'}, "
        f"top1 {top1:.1f}% (at least {DIGITS_MIN_TOP1}%)",
    )


def conv_row(device: str, dtype: str) -> Row:
    from convnet import make_convnet, make_image_batch

    from treadle.runner.model import BaseModel
    from treadle.runner.optim import AmpOptimWrapper

    class ConvClassifier(BaseModel):
        def __init__(self) -> None:
            super().__init__()
            self.net = make_convnet(width=16, device=device)

        def forward(self, inputs: torch.Tensor, labels: torch.Tensor, mode: str = "tensor") -> Any:
            logits = self.net(inputs)
            if mode == "loss":
                return {"loss": nn.functional.cross_entropy(logits.float(), labels)}
            return logits

    model = ConvClassifier().to(device)
    probe = DtypeProbe(model.net[0])
    wrapper = AmpOptimWrapper(
        optimizer=torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9), dtype=dtype
    )
    batches = [make_image_batch(16, 16, seed=seed, device=device) for seed in range(CONV_BATCHES)]
    losses = []
    for step in range(CONV_STEPS):
        inputs, labels = batches[step % CONV_BATCHES]
        losses.append(model.train_step({"inputs": inputs, "labels": labels}, wrapper)["loss"])
    first = float(torch.stack(losses[:CONV_BATCHES]).mean())
    last = float(torch.stack(losses[-CONV_BATCHES:]).mean())
    finite = bool(torch.isfinite(torch.stack(losses)).all())
    scaler_on = wrapper.loss_scaler.is_enabled()
    ok = (
        probe.dtype == getattr(torch, dtype)
        and finite
        and last < first
        and scaler_on == (dtype == "float16")
    )
    return verdict(
        f"amp: {SHORT[dtype]} conv net",
        ok,
        f"loss x{last / first:.2f} in {CONV_STEPS} steps",
        f"layers ran in {probe.dtype}, losses finite: {finite}, loss {first:.3g} -> {last:.3g}, "
        f"loss scaler {'on' if scaler_on else 'off'}",
    )


def run(device: str, work_dir: Path) -> list[Row]:
    return [
        overflow_row(work_dir / "overflow", device),
        digits_row(work_dir, device, "float16"),
        digits_row(work_dir, device, "bfloat16"),
        conv_row(device, "float16"),
        conv_row(device, "bfloat16"),
    ]
