"""Train a Runner and compare a resumed run with the run that never stopped: the losses of
every iteration both trained, and the final weights (gathered where they are sharded)."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from treadle.runner.hooks import Hook
from treadle.runner.model.wrappers.utils import unwrap_model


class LossTrace(Hook):
    """The loss of every train iteration, kept on the device (read once the run is over)."""

    priority = "VERY_LOW"

    def __init__(self) -> None:
        self.losses: dict[int, torch.Tensor] = {}

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        self.losses[runner.iter + 1] = outputs["loss"].detach()


@dataclass
class Trace:
    """What a finished run leaves to compare: losses by iteration and the final weights."""

    losses: dict[int, float]
    weights: dict[str, torch.Tensor]
    runner: Any


def whole_weights(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The model's weights on the CPU in float64, sharded (DTensor) ones gathered whole."""
    weights = {}
    for name, value in unwrap_model(model).state_dict().items():
        if not isinstance(value, torch.Tensor) or not value.is_floating_point():
            continue
        if hasattr(value, "full_tensor"):
            value = value.full_tensor()
        weights[name] = value.detach().to("cpu", torch.float64)
    return weights


def train(runner_class: type, cfg: dict[str, Any]) -> Trace:
    """Train ``runner_class(**cfg)`` with a LossTrace added to its custom hooks."""
    trace = LossTrace()
    cfg = copy.deepcopy(cfg)
    cfg["custom_hooks"] = [*cfg.get("custom_hooks", []), trace]
    runner = runner_class(**cfg)
    runner.train()
    losses = {it: float(loss) for it, loss in trace.losses.items()}
    return Trace(losses, whole_weights(runner.model), runner)


@dataclass
class ResumeDelta:
    """How far a resumed run is from the uninterrupted one (0.0 both: bit for bit)."""

    loss: float
    weights: float
    first_resumed_iter: int
    iters_compared: int
    runner: Any  # the resumed run's, for what a check inspects after it

    @property
    def exact(self) -> bool:
        return self.loss == 0.0 and self.weights == 0.0 and self.iters_compared > 0

    def figure(self) -> str:
        return f"max |Δloss| {self.loss:.3g}, max |Δw| {self.weights:.3g}"


def max_abs_delta(first: dict[Any, Any], second: dict[Any, Any]) -> float:
    """The largest absolute difference over the keys of ``second`` (inf if one is missing)."""
    worst = 0.0
    for key, value in second.items():
        if key not in first:
            return float("inf")
        other = first[key]
        if isinstance(value, torch.Tensor):
            if value.shape != other.shape:
                return float("inf")
            worst = max(worst, (value - other).abs().max().item() if value.numel() else 0.0)
        else:
            worst = max(worst, abs(value - other))
    return worst


def resume_delta(
    runner_class: type, make_cfg: Any, work_dir: Path, checkpoint: str = "iter_5.pth"
) -> ResumeDelta:
    """Train ``make_cfg(work_dir/'full')`` to the end, then resume ``checkpoint`` of it in a
    fresh runner of ``make_cfg(work_dir/'resumed', load_from=..., resume=True)``."""
    full = train(runner_class, make_cfg(work_dir / "full"))
    saved = work_dir / "full" / checkpoint
    if not saved.exists():
        raise FileNotFoundError(f"the uninterrupted run wrote no {checkpoint} in {saved.parent}")
    resumed = train(runner_class, make_cfg(work_dir / "resumed", load_from=str(saved), resume=True))
    if not resumed.losses:
        raise RuntimeError("the resumed run trained no iteration")
    if max(resumed.losses) != max(full.losses):
        raise RuntimeError(
            f"the resumed run ended at iteration {max(resumed.losses)}, the full one at "
            f"{max(full.losses)}"
        )
    return ResumeDelta(
        loss=max_abs_delta(full.losses, resumed.losses),
        weights=max_abs_delta(full.weights, resumed.weights),
        first_resumed_iter=min(resumed.losses),
        iters_compared=len(resumed.losses),
        runner=resumed.runner,
    )
