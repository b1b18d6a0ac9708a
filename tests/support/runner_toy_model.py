"""Toys for every test that runs a real Runner: a tiny model, a data set, a metric, a
constructor for two optimizers, and ``toy_cfg``, the config that trains them.

Import them as ``from runner_toy_model import toy_cfg, ToyModel`` (tests/support is on pytest's
``pythonpath``). Importing this module registers the toys in treadle's root registries under
names that say where they come from (so that another test's ``ToyModel`` never replaces them):

- MODELS: ``RunnerToyModel`` (Linear(2, 2) then Linear(2, 1), mean squared error) and
  ``RunnerToyTwoOptimModel`` (two such halves, each stepped by its own optimizer);
- DATASETS: ``RunnerToyDataset`` (``length`` samples of ``dict(inputs=Tensor[2],
  data_samples=Tensor[])``, the same data whatever the global random state);
- METRICS: ``RunnerToyMetric`` (``mse`` and ``acc`` of the predictions, or a fixed sequence of
  values for tests of save_best / early stopping);
- OPTIM_WRAPPER_CONSTRUCTORS: ``RunnerToyTwoOptimConstructor`` (an OptimWrapperDict with one
  wrapper per top-level child the config names).

``toy_cfg(work_dir)`` trains RunnerToyModel for 3 epochs of 4 iterations (12 samples, batch 3),
validating every epoch; keyword arguments replace top-level keys
(``toy_cfg(d, train_cfg=dict(by_epoch=False, max_iters=8), val_dataloader=None, ...)``).
Runner(**toy_cfg(d)) and Runner.from_cfg(Config(toy_cfg(d))) both work.

Example:
    >>> from treadle.runner.runner import Runner
    >>> runner = Runner(**toy_cfg(tmp_path))
    >>> runner.train()
"""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Sequence
from typing import Any, ClassVar

import pytest
import torch
from torch import nn
from torch.utils.data import Dataset

from treadle.runner.evaluator import BaseMetric
from treadle.runner.model import BaseModel
from treadle.runner.optim import OptimWrapperDict, build_optim_wrapper
from treadle.runner.registry import DATASETS, METRICS, MODELS, OPTIM_WRAPPER_CONSTRUCTORS

# Each config gets its own experiment name: the logger, the message hub and the visualizer are
# instances by name, and two runners of one test must not share them.
_names = itertools.count()


def unique_name(stem: str = "toy") -> str:
    """A name no other runner of this process has used (for ``experiment_name``)."""
    return f"{stem}_{os.getpid()}_{next(_names)}"


def stacked(value: Any) -> Any:
    """A list of per-sample tensors (the default ``pseudo_collate`` batch) as one tensor."""
    if isinstance(value, (list, tuple)):
        return torch.stack(list(value))
    return value


class _Head(nn.Module):
    """Linear(2, 2) then Linear(2, 1): the part of a toy model that has weights."""

    def __init__(self, with_bn: bool = False) -> None:
        super().__init__()
        self.linear1 = nn.Linear(2, 2)
        # A BatchNorm gives the model buffers (for SyncBuffersHook and EMA tests).
        self.bn = nn.BatchNorm1d(2) if with_bn else nn.Identity()
        self.linear2 = nn.Linear(2, 1)

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.linear2(self.bn(self.linear1(inputs))).squeeze(-1)


@MODELS.register_module(name="RunnerToyModel", force=True)
class ToyModel(BaseModel):
    """The model of the runner tests: ``forward(inputs, data_samples, mode)``.

    Args:
        with_bn: put a BatchNorm1d between the two layers (buffers to sync/average).
        loss_key: the key of the loss in ``mode='loss'``; anything without 'loss' in it makes
            a model whose forward returns no loss (for the runner's error message).
        nonfinite_from: from this forward call on (0-based, counting training forwards only),
            the loss is NaN; None never.
        nonfinite_value: the value of that loss (``float('nan')``, ``float('inf')``).
        data_preprocessor: as for BaseModel.

    Example:
        >>> model = ToyModel()
        >>> sorted(model(torch.ones(3, 2), torch.zeros(3), mode='loss'))
        ['loss']
    """

    def __init__(
        self,
        with_bn: bool = False,
        loss_key: str = "loss",
        nonfinite_from: int | None = None,
        nonfinite_value: float = float("nan"),
        data_preprocessor: dict | nn.Module | None = None,
    ) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.head = _Head(with_bn)
        self.loss_key = loss_key
        self.nonfinite_from = nonfinite_from
        self.nonfinite_value = nonfinite_value
        self.loss_calls = 0

    def forward(
        self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor"
    ) -> dict[str, torch.Tensor] | list | torch.Tensor:
        inputs, data_samples = stacked(inputs), stacked(data_samples)
        outputs = self.head(inputs)
        if mode == "loss":
            loss = ((outputs - data_samples) ** 2).mean()
            if self.nonfinite_from is not None and self.loss_calls >= self.nonfinite_from:
                loss = loss * self.nonfinite_value
            self.loss_calls += 1
            return {self.loss_key: loss}
        if mode == "predict":
            return [dict(pred=p, gt=g) for p, g in zip(outputs.detach(), data_samples, strict=True)]
        return outputs


@MODELS.register_module(name="RunnerToyTwoOptimModel", force=True)
class ToyTwoOptimModel(BaseModel):
    """Two heads, ``a`` and ``b``, each trained by its own optimizer (``optim_wrapper['a']``,
    ``optim_wrapper['b']``), as a GAN steps its generator and discriminator. Its config needs
    ``optim_wrapper=dict(constructor='RunnerToyTwoOptimConstructor', a=dict(...), b=dict(...))``
    (``toy_two_optim_cfg`` writes it).

    Example:
        >>> model = ToyTwoOptimModel()
        >>> sorted(name for name, _ in model.named_children())
        ['a', 'b', 'data_preprocessor']
    """

    def __init__(self, data_preprocessor: dict | nn.Module | None = None) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.a = _Head()
        self.b = _Head()

    def forward(
        self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor"
    ) -> dict[str, torch.Tensor] | list | torch.Tensor:
        inputs, data_samples = stacked(inputs), stacked(data_samples)
        outputs = (self.a(inputs) + self.b(inputs)) / 2
        if mode == "loss":
            return {"loss": ((outputs - data_samples) ** 2).mean()}
        if mode == "predict":
            return [dict(pred=p, gt=g) for p, g in zip(outputs.detach(), data_samples, strict=True)]
        return outputs

    def train_step(self, data: Any, optim_wrapper: Any) -> dict[str, torch.Tensor]:
        data = self.data_preprocessor(data, True)
        inputs, targets = stacked(data["inputs"]), stacked(data["data_samples"])
        log_vars = {}
        for name in ("a", "b"):
            wrapper = optim_wrapper[name]
            with wrapper.optim_context(self):
                head = getattr(self, name)
                loss = ((head(inputs) - targets) ** 2).mean()
            wrapper.update_params(loss)
            log_vars[f"loss_{name}"] = loss.detach()
        log_vars["loss"] = log_vars["loss_a"] + log_vars["loss_b"]
        return log_vars


@OPTIM_WRAPPER_CONSTRUCTORS.register_module(name="RunnerToyTwoOptimConstructor", force=True)
class ToyTwoOptimConstructor:
    """Builds an OptimWrapperDict: one optimizer wrapper per key of the config, over the
    model's child of that name (``dict(a=dict(optimizer=...), b=dict(...))``).

    Example:
        >>> constructor = ToyTwoOptimConstructor(
        ...     dict(a=dict(optimizer=dict(type='SGD', lr=0.1)),
        ...          b=dict(optimizer=dict(type='SGD', lr=0.2))))
        >>> sorted(constructor(ToyTwoOptimModel()).keys())
        ['a', 'b']
    """

    def __init__(self, optim_wrapper_cfg: dict, paramwise_cfg: dict | None = None) -> None:
        self.optim_wrapper_cfg = optim_wrapper_cfg

    def __call__(self, model: nn.Module) -> OptimWrapperDict:
        model = getattr(model, "module", model)
        wrappers = {
            name: build_optim_wrapper(getattr(model, name), copy.deepcopy(dict(cfg)))
            for name, cfg in self.optim_wrapper_cfg.items()
        }
        return OptimWrapperDict(**wrappers)


@DATASETS.register_module(name="RunnerToyDataset", force=True)
class ToyDataset(Dataset):
    """``length`` samples ``dict(inputs=x, data_samples=y)`` with x ~ N(0, 1)^2 and
    y = x0 - 2 x1 + noise, drawn from ``seed`` (never from the global generator, so the data is
    the same whatever a test seeded).

    ``metainfo`` is a class attribute as on BaseDataset (the runner hands it to the evaluator
    and puts it in checkpoints).

    Example:
        >>> dataset = ToyDataset(length=4)
        >>> len(dataset), sorted(dataset[0])
        (4, ['data_samples', 'inputs'])
    """

    metainfo: ClassVar[dict] = dict(classes=("toy",))

    def __init__(self, length: int = 12, seed: int = 0) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.inputs = torch.randn(length, 2, generator=generator)
        noise = 0.1 * torch.randn(length, generator=generator)
        self.targets = self.inputs[:, 0] - 2 * self.inputs[:, 1] + noise

    def __len__(self) -> int:
        return len(self.inputs)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return dict(inputs=self.inputs[index], data_samples=self.targets[index])


@METRICS.register_module(name="RunnerToyMetric", force=True)
class ToyMetric(BaseMetric):
    """``mse`` of the predictions and ``acc``, the share within 0.5 of the target; or, when
    ``values`` is given, its i-th dict at the i-th evaluation (the last one repeated), to drive
    save_best and early stopping.

    Example:
        >>> metric = ToyMetric(values=[dict(acc=0.1), dict(acc=0.3)])
        >>> metric.process(None, [dict(pred=torch.tensor(1.0), gt=torch.tensor(1.0))])
        >>> metric.evaluate(1), metric.evaluate(1)
        ({'acc': 0.1}, {'acc': 0.3})
    """

    default_prefix = ""

    def __init__(
        self,
        values: Sequence[dict[str, float]] | None = None,
        collect_device: str = "cpu",
        prefix: str | None = None,
    ) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.values = list(values) if values is not None else None
        self.evaluations = 0

    def process(self, data_batch: Any, data_samples: Sequence[dict]) -> None:
        for sample in data_samples:
            error = float(sample["pred"]) - float(sample["gt"])
            self.results.append(error)

    def compute_metrics(self, results: list) -> dict[str, float]:
        index, self.evaluations = self.evaluations, self.evaluations + 1
        if self.values is not None:
            return dict(self.values[min(index, len(self.values) - 1)])
        mse = sum(error**2 for error in results) / max(len(results), 1)
        acc = sum(abs(error) < 0.5 for error in results) / max(len(results), 1)
        return dict(mse=mse, acc=acc)


def _loader(shuffle: bool, length: int = 12, batch_size: int = 3) -> dict[str, Any]:
    return dict(
        dataset=dict(type="RunnerToyDataset", length=length),
        sampler=dict(type="DefaultSampler", shuffle=shuffle),
        batch_size=batch_size,
        num_workers=0,
    )


def toy_cfg(work_dir: Any, **overrides: Any) -> dict[str, Any]:
    """The keyword arguments of a Runner that trains RunnerToyModel on RunnerToyDataset:
    3 epochs of 4 iterations, SGD lr 0.01 with MultiStepLR at epochs 1 and 2, validation every
    epoch with RunnerToyMetric, a log line every iteration, seed 0, a unique experiment name.
    ``overrides`` replace top-level keys as they are (None removes a dataloader/evaluator/...).

    Example:
        >>> cfg = toy_cfg('/tmp/w', train_cfg=dict(by_epoch=False, max_iters=8, val_interval=4))
        >>> cfg['train_cfg']['max_iters'], cfg['model']['type']
        (8, 'RunnerToyModel')
    """
    cfg: dict[str, Any] = dict(
        model=dict(type="RunnerToyModel"),
        work_dir=str(work_dir),
        train_dataloader=_loader(shuffle=True),
        val_dataloader=_loader(shuffle=False),
        test_dataloader=_loader(shuffle=False),
        optim_wrapper=dict(type="OptimWrapper", optimizer=dict(type="SGD", lr=0.01)),
        param_scheduler=dict(type="MultiStepLR", milestones=[1, 2], by_epoch=True),
        val_evaluator=dict(type="RunnerToyMetric"),
        test_evaluator=dict(type="RunnerToyMetric"),
        train_cfg=dict(by_epoch=True, max_epochs=3, val_interval=1),
        val_cfg=dict(),
        test_cfg=dict(),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=1)),
        log_processor=dict(window_size=1),
        randomness=dict(seed=0),
        env_cfg=dict(dist_cfg=dict(backend="gloo")),
        experiment_name=unique_name(),
    )
    # Not copied: overrides may be built objects (a model, a DataLoader) the test checks.
    cfg.update(overrides)
    return cfg


def toy_iter_cfg(work_dir: Any, **overrides: Any) -> dict[str, Any]:
    """``toy_cfg`` for an iteration-based run: 10 iterations (2.5 epochs of the data), SGD with
    MultiStepLR at iterations 4 and 8, validation every 5 iterations.

    Example:
        >>> toy_iter_cfg('/tmp/w')['train_cfg']
        {'by_epoch': False, 'max_iters': 10, 'val_interval': 5}
    """
    base: dict[str, Any] = dict(
        train_cfg=dict(by_epoch=False, max_iters=10, val_interval=5),
        param_scheduler=dict(type="MultiStepLR", milestones=[4, 8], by_epoch=False),
        log_processor=dict(window_size=1, by_epoch=False),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=1),
            checkpoint=dict(type="CheckpointHook", interval=5, by_epoch=False),
        ),
    )
    base.update(overrides)
    return toy_cfg(work_dir, **base)


# toy_cfg's 12 iterations (3 epochs of 4) run iteration-based: with it, the hook tests run both
# loops (``@pytest.mark.parametrize("cfg", TOY_LOOPS)``, then ``toy_cfg(tmp_path, **cfg)``).
TOY_ITER_BASED_12 = dict(
    train_cfg=dict(by_epoch=False, max_iters=12, val_interval=6),
    param_scheduler=dict(type="MultiStepLR", milestones=[4, 8], by_epoch=False),
    log_processor=dict(by_epoch=False),
)
TOY_LOOPS = [
    pytest.param({}, id="epoch-based"),
    pytest.param(TOY_ITER_BASED_12, id="iter-based"),
]


def toy_store_cfg(work_dir: Any, out_dir: str, **checkpoint: Any) -> dict[str, Any]:
    """``toy_iter_cfg`` without validation, saving every 4 iterations to ``out_dir`` (a store
    URL); ``checkpoint`` adds CheckpointHook arguments. Further overrides go on the result.

    Example:
        >>> cfg = toy_store_cfg('/tmp/w', 's3://bucket/ckpts', max_keep_ckpts=2)
        >>> cfg['default_hooks']['checkpoint']['out_dir'], cfg['val_dataloader']
        ('s3://bucket/ckpts', None)
    """
    hook = dict(type="CheckpointHook", interval=4, by_epoch=False, out_dir=out_dir)
    hook.update(checkpoint)
    return toy_iter_cfg(
        str(work_dir),
        experiment_name=unique_name("store"),
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        default_hooks=dict(checkpoint=hook),
    )


def toy_two_optim_cfg(work_dir: Any, **overrides: Any) -> dict[str, Any]:
    """``toy_cfg`` with RunnerToyTwoOptimModel and two SGD optimizers (lr 0.01 and 0.02), each
    with its own MultiStepLR.

    Example:
        >>> sorted(toy_two_optim_cfg('/tmp/w')['optim_wrapper'])
        ['a', 'b', 'constructor']
    """
    base: dict[str, Any] = dict(
        model=dict(type="RunnerToyTwoOptimModel"),
        optim_wrapper=dict(
            constructor="RunnerToyTwoOptimConstructor",
            a=dict(type="OptimWrapper", optimizer=dict(type="SGD", lr=0.01)),
            b=dict(type="OptimWrapper", optimizer=dict(type="SGD", lr=0.02)),
        ),
        param_scheduler=dict(
            a=dict(type="MultiStepLR", milestones=[1, 2], by_epoch=True),
            b=dict(type="MultiStepLR", milestones=[2], by_epoch=True),
        ),
    )
    base.update(overrides)
    return toy_cfg(work_dir, **base)


__all__ = [
    "ToyDataset",
    "ToyMetric",
    "ToyModel",
    "ToyTwoOptimConstructor",
    "ToyTwoOptimModel",
    "stacked",
    "toy_cfg",
    "toy_iter_cfg",
    "toy_two_optim_cfg",
    "unique_name",
]
