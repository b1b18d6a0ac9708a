"""treadle's loops against MMEngine 0.10.7's, each driven by the same stub runner: the hooks
called (names, batch indices, the runner's epoch/iter at each call), the batches trained on,
the validation schedule and the val losses; and resuming an iteration-based run from MMEngine's
counters (MMEngine replays the batches, treadle positions the sampler: the same batches follow).

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...``.
"""

from __future__ import annotations

from typing import ClassVar

import pytest

pytest.importorskip("mmengine")

import mmengine.dataset as mm_dataset
import mmengine.evaluator as mm_evaluator
import mmengine.runner as mm_runner
import mmengine.structures as mm_structures
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

import treadle.runner.dataset as tr_dataset
import treadle.runner.evaluator as tr_evaluator
import treadle.runner.loops as tr_loops
import treadle.runner.structures as tr_structures

SIDES = {
    "mmengine": (mm_runner, mm_dataset, mm_evaluator, mm_structures),
    "treadle": (tr_loops, tr_dataset, tr_evaluator, tr_structures),
}


class Indexed(Dataset):
    metainfo: ClassVar[dict] = dict(classes=("a",))

    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> int:
        return index


class Model(nn.Module):
    def __init__(self, element: type) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(()))
        self.element = element

    def train_step(self, data, optim_wrapper=None):
        return dict(loss=self.weight * data.float().mean())

    def val_step(self, data):
        loss = data.float().mean()
        return [dict(value=int(i)) for i in data] + [self.element(loss=dict(loss_v=loss))]


def _metric_class(evaluator_module):
    class Count(evaluator_module.BaseMetric):
        def process(self, data_batch, data_samples):
            self.results.extend(sample["value"] for sample in data_samples)

        def compute_metrics(self, results):
            return dict(total=sum(results))

    return Count


class ParityRunner:
    """The same runner for both sides; ``record`` lists (hook, batch_idx, epoch, iter)."""

    def __init__(self, side, train_cfg, loader_kwargs, val=True):
        loops, dataset_module, evaluator_module, structures = SIDES[side]
        self.seed, self._randomness_cfg = 0, dict(seed=0)
        self.model = Model(structures.BaseDataElement)
        self.optim_wrapper = None
        self.visualizer = type("Vis", (), {"dataset_meta": None})()
        self.record = []
        self.batches = []
        sampler_type = loader_kwargs.pop("sampler", "DefaultSampler")
        data = Indexed(loader_kwargs.pop("length", 10))
        sampler = getattr(dataset_module, sampler_type)(data, shuffle=True, seed=0)
        self.loader = DataLoader(data, sampler=sampler, **loader_kwargs)
        self.val_loop = None
        self.train_loop = None
        if val:
            evaluator = evaluator_module.Evaluator(_metric_class(evaluator_module)())
            val_loader = DataLoader(Indexed(4), batch_size=2)
            self.val_loop = loops.ValLoop(self, val_loader, evaluator)
        cfg = dict(train_cfg)
        loop_cls = getattr(loops, cfg.pop("type"))
        self.train_loop = loop_cls(self, self.loader, **cfg)

    @property
    def epoch(self):
        return self.train_loop.epoch

    @property
    def iter(self):
        return self.train_loop.iter

    def call_hook(self, name, **kwargs):
        self.record.append((name, kwargs.get("batch_idx"), self.epoch, self.iter))
        if name == "before_train_epoch":  # DistSamplerSeedHook
            self.loader.sampler.set_epoch(self.epoch)
        if name == "after_train_iter":
            self.batches.append(kwargs["data_batch"].tolist())
        if name == "after_val_epoch":
            self.record.append(("metrics", tuple(sorted(kwargs["metrics"].items())), 0, 0))


def _both(train_cfg, loader_kwargs, **kwargs):
    runs = {}
    for side in SIDES:
        runner = ParityRunner(side, train_cfg, dict(loader_kwargs), **kwargs)
        runner.train_loop.run()
        runs[side] = runner
    return runs["mmengine"], runs["treadle"]


@pytest.mark.parametrize(
    "train_cfg",
    [
        dict(type="EpochBasedTrainLoop", max_epochs=4),
        dict(type="EpochBasedTrainLoop", max_epochs=5, val_interval=2, val_begin=2),
        dict(type="EpochBasedTrainLoop", max_epochs=6, val_interval=3, dynamic_intervals=[(3, 1)]),
        dict(type="EpochBasedTrainLoop", max_epochs=6, dynamic_intervals=[(2, 2), (5, 1)]),
    ],
)
def test_epoch_loop_hooks_batches_and_validation_match(train_cfg):
    mm, tr = _both(train_cfg, dict(batch_size=3))
    assert tr.record == mm.record
    assert tr.batches == mm.batches
    assert (tr.epoch, tr.iter) == (mm.epoch, mm.iter)
    assert tr.train_loop.max_iters == mm.train_loop.max_iters


@pytest.mark.parametrize(
    "train_cfg",
    [
        dict(type="IterBasedTrainLoop", max_iters=9, val_interval=4),
        dict(type="IterBasedTrainLoop", max_iters=12, val_interval=5, dynamic_intervals=[(6, 2)]),
    ],
)
def test_iter_loop_hooks_batches_and_validation_match(train_cfg):
    # InfiniteSampler: MMEngine's loop sleeps 2 s each time a finite loader restarts.
    mm, tr = _both(train_cfg, dict(batch_size=3, sampler="InfiniteSampler"))
    assert tr.record == mm.record
    assert tr.batches == mm.batches


def test_iter_loop_resumed_from_counters_trains_on_the_same_batches():
    # What MMEngine's Runner.resume does: set the counters, then run the loop.
    cfg = dict(type="IterBasedTrainLoop", max_iters=9)
    runs = {}
    for side in SIDES:
        runner = ParityRunner(side, cfg, dict(batch_size=3, sampler="InfiniteSampler"), val=False)
        runner.train_loop._iter = 4
        runner.train_loop.run()
        runs[side] = runner
    assert runs["treadle"].batches == runs["mmengine"].batches
    assert len(runs["treadle"].batches) == 5


def test_val_loop_metrics_and_losses_match():
    metrics = {}
    for side in SIDES:
        runner = ParityRunner(side, dict(type="EpochBasedTrainLoop", max_epochs=1), {})
        metrics[side] = runner.val_loop.run()
    assert metrics["treadle"] == pytest.approx(metrics["mmengine"], abs=0, rel=0)
    assert set(metrics["treadle"]) == {"total", "loss_v", "val_loss"}
