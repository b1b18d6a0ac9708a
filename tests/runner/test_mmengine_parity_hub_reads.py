"""What code outside the hooks reads in the message hub at each training step, treadle against
MMEngine 0.10.7: a model whose ``train_step`` reads the hub at every step and a dataset that
reads it while each batch loads, on both Runners, with a log line every 5 iterations (so treadle
calls its recording hooks at few steps), the lr changing by epoch or not at all, and validation
inside an iteration-based run. Every scalar's history length and last value (timings: length
only) and 'iter' must be the same at every read.

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...`` (or the downstream env).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mmengine")


import torch
from mmengine_globals import mmengine_globals_restored
from torch import nn


@pytest.fixture(autouse=True)
def _mmengine_state_put_back():
    # MMEngine's Runner runs in this process: its current scope, logger, hub and visualizer must
    # not reach the parity tests that run after these.
    with mmengine_globals_restored():
        yield


TIMINGS = ("time", "data_time")


def side(name: str) -> dict[str, Any]:
    if name == "mmengine":
        from mmengine.evaluator import BaseMetric
        from mmengine.logging import MessageHub
        from mmengine.model import BaseModel
        from mmengine.runner import Runner
    else:
        from treadle.logging import MessageHub
        from treadle.runner.evaluator import BaseMetric
        from treadle.runner.model import BaseModel
        from treadle.runner.runner import Runner
    return dict(Runner=Runner, BaseModel=BaseModel, BaseMetric=BaseMetric, MessageHub=MessageHub)


def snapshot(hub: Any, where: str) -> tuple:
    scalars = {}
    for key, buffer in hub.log_scalars.items():
        values = list(buffer.data[0])
        last = [] if key.rsplit("/", 1)[-1] in TIMINGS else [round(float(values[-1]), 6)]
        scalars[key] = [len(values), *last]
    return where, hub.runtime_info.get("iter"), scalars


def make_parts(parts: dict[str, Any], reads: list) -> tuple[Any, Any, Any]:
    hub_class = parts["MessageHub"]

    class Data(torch.utils.data.Dataset):
        def __init__(self) -> None:
            generator = torch.Generator().manual_seed(1)
            self.inputs = torch.randn(24, 3, generator=generator)

        def __len__(self) -> int:
            return 24

        def __deepcopy__(self, memo: dict) -> Any:
            return self

        def __getitem__(self, index: int) -> dict:
            if index % 4 == 0:
                reads.append(snapshot(hub_class.get_current_instance(), "dataset"))
            return {"inputs": self.inputs[index]}

    class Net(parts["BaseModel"]):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.net = nn.Linear(3, 1)

        def train_step(self, data, optim_wrapper):
            if self.training:
                reads.append(snapshot(hub_class.get_current_instance(), "train_step"))
            return super().train_step(data, optim_wrapper)

        def forward(self, inputs, mode="tensor"):
            out = self.net(inputs)
            if mode == "loss":
                return {"loss_a": out.pow(2).mean(), "loss_b": 1e-2 * out.abs().mean()}
            return [{"out": out}]

    class Metric(parts["BaseMetric"]):
        def process(self, data_batch, data_samples):
            self.results.extend(float(sample["out"].mean()) for sample in data_samples)

        def compute_metrics(self, results):
            return {"mean": sum(results) / len(results)}

    return Net(), Data(), Metric()


def run(name: str, work_dir: Path, by_epoch: bool) -> list:
    parts = side(name)
    reads: list = []
    model, data, metric = make_parts(parts, reads)
    loader = dict(
        dataset=data,
        batch_size=4,
        num_workers=0,
        collate_fn=dict(type="default_collate"),
        sampler=dict(type="DefaultSampler", shuffle=False),
    )
    if by_epoch:
        extra = dict(
            train_cfg=dict(by_epoch=True, max_epochs=3),
            param_scheduler=dict(type="StepLR", step_size=1, gamma=0.5, by_epoch=True),
        )
    else:
        extra = dict(
            train_cfg=dict(by_epoch=False, max_iters=14, val_interval=6),
            val_dataloader=loader,
            val_evaluator=[metric],
            val_cfg=dict(),
        )
    runner = parts["Runner"](
        model=model,
        work_dir=str(work_dir),
        train_dataloader=loader,
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=5),
            checkpoint=dict(type="CheckpointHook", interval=100),
        ),
        randomness=dict(seed=0),
        experiment_name=f"parity-hub-reads-{name}-{by_epoch}",
        **extra,
    )
    runner.train()
    return reads


@pytest.mark.parametrize("by_epoch", [True, False], ids=["epoch-based", "iter-based-with-val"])
def test_reads_outside_hooks_see_what_mmengine_shows(tmp_path, by_epoch):
    theirs = run("mmengine", tmp_path / "mm", by_epoch)
    mine = run("treadle", tmp_path / "tr", by_epoch)
    assert len(theirs) > 20
    for index, (read, expected) in enumerate(zip(mine, theirs, strict=True)):
        assert read == expected, index
