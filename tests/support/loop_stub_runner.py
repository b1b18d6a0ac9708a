"""A stand-in runner for the loop tests (tests/runner/test_loops_*.py): just what the loops use.

``StubRunner`` has a model, an optimizer wrapper, a visualizer (a namespace with
``dataset_meta``), ``build_dataloader``/``build_evaluator``, ``call_hook`` (records every call,
then calls the methods of ``runner.hooks`` of that name), and ``epoch``/``iter`` read from the
train loop. ``LoopToyModel`` draws from every random generator while training (dropout from
torch, a factor from NumPy, one from Python's ``random``), so a resumed run matches the
uninterrupted one only if every generator was restored; ``LoopToyDataset`` optionally adds
noise from torch's global generator in ``__getitem__`` (drawn in the main process when
``num_workers=0``).

Example:
    >>> runner = StubRunner(train=dict(type='EpochBasedTrainLoop', max_epochs=2))
    >>> runner.train_loop.run()  # doctest: +SKIP
"""

from __future__ import annotations

import copy
import io
import random
from functools import partial
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from treadle.runner.dataset import worker_init_fn
from treadle.runner.evaluator import BaseMetric, Evaluator
from treadle.runner.model import BaseModel
from treadle.runner.optim import OptimWrapper
from treadle.runner.registry import DATA_SAMPLERS, LOOPS


class LoopToyDataset(Dataset):
    """``length`` samples ``dict(inputs=Tensor[4], data_samples=Tensor[], index=int)``."""

    metainfo: ClassVar[dict] = dict(classes=("loop-toy",))

    def __init__(self, length: int = 10, noise: bool = False) -> None:
        generator = torch.Generator().manual_seed(1234)
        self.inputs = torch.randn(length, 4, generator=generator)
        self.targets = self.inputs.sum(1) + 0.1 * torch.randn(length, generator=generator)
        self.noise = noise

    def __len__(self) -> int:
        return len(self.inputs)

    def __getitem__(self, index: int) -> dict[str, Any]:
        inputs = self.inputs[index]
        if self.noise:
            inputs = inputs + 0.01 * torch.randn(4)
        return dict(inputs=inputs, data_samples=self.targets[index], index=index)


class LoopToyModel(BaseModel):
    """Linear(4, 8), dropout, Linear(8, 1); the loss also draws from NumPy and Python.

    ``nonfinite_at``: the training forward calls (0-based) whose loss is NaN.
    ``val_loss``: ``val_step`` also reports a loss element (for the eval-loss summary).
    """

    def __init__(self, nonfinite_at: tuple[int, ...] = (), val_loss: bool = False) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.3), nn.Linear(8, 1))
        self.nonfinite_at = set(nonfinite_at)
        self.val_loss = val_loss
        self.calls = 0

    def forward(self, inputs: Any, data_samples: Any = None, index: Any = None, mode="tensor"):
        outputs = self.net(inputs).squeeze(-1)
        if mode == "loss":
            scale = 1.0 + 0.01 * float(np.random.rand()) + 0.01 * random.random()
            loss = ((outputs - data_samples) ** 2).mean() * scale
            if self.calls in self.nonfinite_at:
                loss = loss * float("nan")
            self.calls += 1
            return dict(loss=loss)
        if mode == "predict":
            return [dict(pred=p, gt=g) for p, g in zip(outputs, data_samples, strict=True)]
        return outputs

    def val_step(self, data: Any) -> list:
        outputs = super().val_step(data)
        if self.val_loss:
            from treadle.runner.structures import BaseDataElement

            preds = torch.stack([o["pred"] for o in outputs])
            gts = torch.stack([o["gt"] for o in outputs])
            outputs.append(BaseDataElement(loss=dict(loss_mse=((preds - gts) ** 2).mean())))
        return outputs


class LoopToyMetric(BaseMetric):
    """The mean squared error of the predictions."""

    default_prefix = "toy"

    def process(self, data_batch: Any, data_samples: Any) -> None:
        for sample in data_samples:
            self.results.append(float(sample["pred"] - sample["gt"]) ** 2)

    def compute_metrics(self, results: list) -> dict[str, float]:
        return dict(mse=sum(results) / max(len(results), 1))


class SamplerSeedStub:
    """DistSamplerSeedHook's job: ``set_epoch(runner.epoch)`` before each train epoch."""

    def before_train_epoch(self, runner: Any) -> None:
        loader = runner.train_loop.dataloader
        sampler = getattr(loader.batch_sampler, "sampler", loader.sampler)
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(runner.epoch)


class LossRecorder:
    """The loss and the sample indices of every train step, as numbers (a sync is fine here)."""

    def __init__(self) -> None:
        self.losses: list[float] = []
        self.indices: list[list[int]] = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        self.losses.append(outputs["loss"].item())
        self.indices.append([int(i) for i in data_batch["index"]])


class SnapshotAt:
    """Saves model, optimizer and loop state in ``after_train_iter`` once ``runner.iter + 1``
    equals ``iteration`` (or in ``after_train_epoch`` of epoch ``epoch``), round-tripped through
    ``torch.save``/``torch.load(weights_only=True)`` as a checkpoint is."""

    def __init__(self, iteration: int | None = None, epoch: int | None = None) -> None:
        self.iteration = iteration
        self.epoch = epoch
        self.snapshot: dict[str, Any] | None = None

    def _save(self, runner: Any) -> None:
        state = dict(
            model=runner.model.state_dict(),
            optimizer=runner.optim_wrapper.state_dict(),
            loop=runner.train_loop.state_dict(),
        )
        buffer = io.BytesIO()
        torch.save(state, buffer)
        buffer.seek(0)
        self.snapshot = torch.load(buffer, weights_only=True)

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        if self.iteration is not None and runner.iter + 1 == self.iteration:
            self._save(runner)

    def after_train_epoch(self, runner) -> None:
        if self.epoch is not None and runner.epoch + 1 == self.epoch:
            self._save(runner)


class StubRunner:
    """What the loops need of a runner (see the module docstring).

    Args:
        train: the train loop's config (``type`` plus its arguments), or None.
        val: the val loop's config, or None for no validation.
        loader: the train dataloader's config (``dataset`` is a LoopToyDataset's kwargs).
        val_loader: the val dataloader's config.
        hooks: objects whose methods named like hook points are called by ``call_hook``.
        seed: the runner's seed (the sampler's seed unless ``loader['sampler']`` has one).
        model: the model's kwargs.
    """

    def __init__(
        self,
        train: dict | None = None,
        val: dict | None = None,
        loader: dict | None = None,
        val_loader: dict | None = None,
        hooks: list | None = None,
        seed: int = 0,
        model: dict | None = None,
        torch_seed: int = 0,
    ) -> None:
        torch.manual_seed(torch_seed)
        np.random.seed(torch_seed)
        random.seed(torch_seed)
        self.seed = seed
        self._randomness_cfg = dict(seed=seed)
        self.model = LoopToyModel(**(model or {}))
        self.optim_wrapper = OptimWrapper(
            torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)
        )
        self.visualizer = SimpleNamespace(dataset_meta=None)
        self.hooks = list(hooks or [])
        self.calls: list[tuple[str, dict]] = []
        self.train_loop = None
        self.val_loop = None
        loader = loader or default_loader()
        if train is not None:
            self.train_loop = build_loop(self, train, loader)
        if val is not None:
            val = dict(val)
            val.setdefault("evaluator", Evaluator(LoopToyMetric()))
            self.val_loop = build_loop(self, val, val_loader or default_loader(shuffle=False))

    @property
    def epoch(self) -> int:
        return self.train_loop.epoch

    @property
    def iter(self) -> int:
        return self.train_loop.iter

    def call_hook(self, fn_name: str, **kwargs: Any) -> None:
        self.calls.append((fn_name, kwargs))
        for hook in self.hooks:
            method = getattr(hook, fn_name, None)
            if method is not None:
                method(self, **kwargs)

    def hook_names(self) -> list[str]:
        return [name for name, _ in self.calls]

    def build_evaluator(self, cfg: Any) -> Evaluator:
        return Evaluator(LoopToyMetric())

    @staticmethod
    def build_dataloader(cfg: dict, seed: int | None = None, diff_rank_seed: bool = False):
        cfg = copy.deepcopy(cfg)
        dataset = LoopToyDataset(**cfg.pop("dataset", {}))
        sampler_cfg = dict(cfg.pop("sampler", dict(type="DefaultSampler")))
        sampler_cfg.setdefault("seed", seed)
        sampler = DATA_SAMPLERS.build(sampler_cfg, default_args=dict(dataset=dataset))
        num_workers = cfg.pop("num_workers", 0)
        init = partial(worker_init_fn, num_workers=num_workers, rank=0, seed=seed or 0)
        return DataLoader(
            dataset,
            sampler=sampler,
            num_workers=num_workers,
            worker_init_fn=init if num_workers else None,
            **cfg,
        )


def default_loader(shuffle: bool = True, **overrides: Any) -> dict[str, Any]:
    """A train/val dataloader config: 10 samples, batch 3 (4 batches, the last short)."""
    cfg = dict(
        dataset=dict(length=10),
        sampler=dict(type="DefaultSampler", shuffle=shuffle),
        batch_size=3,
        num_workers=0,
    )
    cfg.update(overrides)
    return cfg


def build_loop(runner: StubRunner, cfg: dict, loader: Any) -> Any:
    """Build a loop from the LOOPS registry, as the Runner does."""
    return LOOPS.build(dict(cfg), default_args=dict(runner=runner, dataloader=loader))
