"""The toy run both message-hub parity suites train on MMEngine 0.10.7 and on treadle
(test_mmengine_parity_hub_steps.py, test_mmengine_parity_light_steps.py): its data, model,
metric, the two Runners' classes, and a snapshot of what a hook reads in the message hub."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

TIMINGS = ("time", "data_time")
INFO_KEYS = ("epoch", "iter", "max_iters", "max_epochs", "loop_stage", "dataset_meta")


class Data(torch.utils.data.Dataset):
    metainfo: dict = {"classes": ("a", "b")}  # noqa: RUF012 - read-only

    def __init__(self) -> None:
        generator = torch.Generator().manual_seed(1)
        self.inputs = torch.randn(24, 3, generator=generator)
        self.labels = (self.inputs.sum(1) > 0).long()

    def __len__(self) -> int:
        return 24

    def __getitem__(self, index: int) -> dict:
        return {"inputs": self.inputs[index], "labels": self.labels[index]}


def side(name: str) -> dict[str, Any]:
    if name == "mmengine":
        from mmengine.evaluator import BaseMetric
        from mmengine.hooks import Hook
        from mmengine.model import BaseModel
        from mmengine.runner import Runner
    else:
        from treadle.runner.evaluator import BaseMetric
        from treadle.runner.hooks import Hook
        from treadle.runner.model import BaseModel
        from treadle.runner.runner import Runner
    return dict(Runner=Runner, Hook=Hook, BaseModel=BaseModel, BaseMetric=BaseMetric)


def make_model(base_model: type) -> nn.Module:
    class Net(base_model):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.net = nn.Linear(3, 2)

        def forward(self, inputs, labels, mode="tensor"):
            logits = self.net(inputs)
            if mode == "loss":
                return {
                    "loss_ce": nn.functional.cross_entropy(logits, labels),
                    "loss_l2": 1e-3 * logits.pow(2).mean(),
                }
            return [{"pred": logits.argmax(1), "labels": labels}]

    return Net()


def make_metric(base_metric: type) -> Any:
    class Accuracy(base_metric):
        def process(self, data_batch, data_samples):
            for sample in data_samples:
                correct = (sample["pred"] == sample["labels"]).sum().item()
                self.results.append((correct, len(sample["labels"])))

        def compute_metrics(self, results):
            return {"acc": 100.0 * sum(c for c, _ in results) / sum(n for _, n in results)}

    return Accuracy()


def snapshot(runner: Any) -> dict[str, Any]:
    hub = runner.message_hub
    scalars = {}
    for key, buffer in hub.log_scalars.items():
        values = list(buffer.data[0])
        last = [] if key.rsplit("/", 1)[-1] in TIMINGS else [round(float(values[-1]), 6)]
        scalars[key] = [len(values), *last]
    info = {key: str(hub.runtime_info.get(key)) for key in INFO_KEYS}
    return {"scalars": scalars, "info": info}
