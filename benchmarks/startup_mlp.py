"""The small training that benchmarks/runner_startup.py times from launch to its first step:
an MLP (32 -> 64 -> 10) on 256 random samples, validated every epoch with an accuracy metric,
checkpointed, with the default hooks. Its config is startup_mlp_config.py, beside this file.

Imported as the config's custom module, it registers the data set, model and metric in the
registries of the engine named by ``STARTUP_ENGINE`` (``treadle``, the default, or
``mmengine``), so both engines run the same config on the same code. With
``STARTUP_EXIT_AT_FIRST_STEP=1`` it also ends the process at the end of the first optimizer
step (a global optimizer hook, so neither engine is changed).

Run as a script, it is the floor: plain PyTorch (DataLoader, the same MLP, SGD) to its first
step, with the same exit:

    python benchmarks/startup_mlp.py
"""

from __future__ import annotations

import os
import sys
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.utils.data import DataLoader, Dataset

SAMPLES, FEATURES, HIDDEN, CLASSES = 256, 32, 64, 10


def exit_at_first_step() -> None:
    """End the process (status 0) when the first optimizer step is done."""

    def first_step_done(optimizer: Any, args: Any, kwargs: Any) -> None:
        sys.stdout.write("\nFIRST STEP DONE\n")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    register_optimizer_step_post_hook(first_step_done)


class RandomSamples(Dataset):
    """``SAMPLES`` random feature vectors with random labels (seeded: the same each run)."""

    def __init__(self, **kwargs: Any) -> None:
        generator = torch.Generator().manual_seed(0)
        self.inputs = torch.randn(SAMPLES, FEATURES, generator=generator)
        self.labels = torch.randint(0, CLASSES, (SAMPLES,), generator=generator)

    def __len__(self) -> int:
        return SAMPLES

    def __getitem__(self, index: int) -> dict:
        return dict(inputs=self.inputs[index], labels=self.labels[index])


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def register(engine: str) -> None:
    """Define the model and metric on ``engine``'s base classes and register all three parts."""
    if engine == "mmengine":
        from mmengine.evaluator import BaseMetric
        from mmengine.model import BaseModel
        from mmengine.registry import DATASETS, METRICS, MODELS
    else:
        from treadle.runner.evaluator import BaseMetric
        from treadle.runner.model import BaseModel
        from treadle.runner.registry import DATASETS, METRICS, MODELS

    class StartupMLP(BaseModel):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.net = mlp()

        def forward(self, inputs: Any, labels: Any = None, mode: str = "tensor") -> Any:
            logits = self.net(inputs)
            if mode == "loss":
                return {"loss": F.cross_entropy(logits, labels)}
            if mode == "predict":
                return [
                    {"pred": p, "label": t} for p, t in zip(logits.argmax(1), labels, strict=True)
                ]
            return logits

    class StartupAccuracy(BaseMetric):
        default_prefix = "accuracy"

        def process(self, data_batch: Any, data_samples: Any) -> None:
            self.results.extend(bool(s["pred"] == s["label"]) for s in data_samples)

        def compute_metrics(self, results: list) -> dict:
            return {"top1": 100.0 * sum(results) / max(len(results), 1)}

    DATASETS.register_module(name="StartupRandomSamples", module=RandomSamples)
    MODELS.register_module(name="StartupMLP", module=StartupMLP)
    METRICS.register_module(name="StartupAccuracy", module=StartupAccuracy)


def plain_first_step() -> None:
    """The floor: what any PyTorch training does before its first step, and nothing else."""
    loader = DataLoader(RandomSamples(), batch_size=32, shuffle=True)
    model = mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for batch in loader:
        loss = F.cross_entropy(model(batch["inputs"]), batch["labels"])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    sys.exit("the plain loop ended without an optimizer step")


if __name__ == "__main__":
    exit_at_first_step()
    plain_first_step()
else:
    if os.environ.get("STARTUP_EXIT_AT_FIRST_STEP") == "1":
        exit_at_first_step()
    register(os.environ.get("STARTUP_ENGINE", "treadle"))
