"""Toys for the validation-loss tests (``val_cfg=dict(compute_loss=True)``): models with
several loss terms, with a scripted validation loss, without a loss mode or needing inputs the
validation data lacks; a data set without targets; a vis backend that records its scalars.

Importing this module registers them (MODELS, DATASETS, VISBACKENDS) under names starting with
``ValLoss``; it imports runner_toy_model, which registers the runner's toys.

Example:
    >>> from valloss_toys import val_loader
    >>> val_loader(length=7, batch_size=2)['batch_size']
    2
"""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from runner_toy_model import ToyDataset, ToyModel, stacked
from torch.utils.data import Dataset

from treadle.runner.registry import DATASETS, MODELS
from treadle.visual import VISBACKENDS
from treadle.visual.backends.base import BaseVisBackend, force_init_env


def val_loader(
    length: int = 7, batch_size: int = 2, dataset: str = "RunnerToyDataset"
) -> dict[str, Any]:
    """A validation loader config: ``length`` samples in order, without padding (the last
    batch is short, and under DDP the shards are uneven)."""
    return dict(
        dataset=dict(type=dataset, length=length),
        sampler=dict(type="DefaultSampler", shuffle=False, round_up=False),
        batch_size=batch_size,
        num_workers=0,
    )


def whole_set_mse(model: torch.nn.Module, length: int = 7) -> float:
    """The mean squared error of ``model`` (a ToyModel) over the first ``length`` samples of
    RunnerToyDataset, computed in one batch: what ``val/loss`` must equal."""
    dataset = ToyDataset(length=length)
    with torch.no_grad():
        outputs = model.head(dataset.inputs)
    return float(((outputs.double() - dataset.targets.double()) ** 2).mean())


@MODELS.register_module(name="ValLossMultiTermModel", force=True)
class MultiTermModel(ToyModel):
    """A ToyModel whose loss mode reports ``loss_a`` (the mse), ``loss_b`` (a list: half and a
    quarter of it) and ``acc`` (no 'loss' in its name: reported, not summed)."""

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        if mode != "loss":
            return super().forward(inputs, data_samples, mode)
        outputs = self.head(stacked(inputs))
        errors = (outputs - stacked(data_samples)) ** 2
        return dict(
            loss_a=errors.mean(),
            loss_b=[errors.mean() * 0.5, errors.mean() * 0.25],
            acc=(errors < 0.25).float().mean(),
        )


@MODELS.register_module(name="ValLossScriptedModel", force=True)
class ScriptedModel(ToyModel):
    """A ToyModel whose validation loss, after the n-th epoch of ``iters_per_epoch`` training
    iterations, is ``val_losses[n - 1]`` (the last one repeated): to drive save_best and early
    stopping on ``val/loss``."""

    def __init__(self, val_losses: list[float], iters_per_epoch: int = 4) -> None:
        super().__init__()
        self.val_losses = list(val_losses)
        self.iters_per_epoch = iters_per_epoch
        self.train_calls = 0

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        if mode == "loss" and self.training:
            self.train_calls += 1
        if mode != "loss" or self.training:
            return super().forward(inputs, data_samples, mode)
        epoch = max(self.train_calls // self.iters_per_epoch, 1)
        value = self.val_losses[min(epoch, len(self.val_losses)) - 1]
        return dict(loss=torch.tensor(value) + 0 * self.head(stacked(inputs)).sum())


@MODELS.register_module(name="ValLossNoLossModeModel", force=True)
class NoLossModeModel(ToyModel):
    """Predicts, but its loss mode is not implemented."""

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        if mode == "loss":
            raise NotImplementedError("this model only predicts")
        return super().forward(inputs, data_samples, mode)


@MODELS.register_module(name="ValLossListLossModel", force=True)
class ListLossModel(ToyModel):
    """Returns its raw outputs (a tensor) in loss mode instead of a dict of losses."""

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        if mode == "loss":
            return self.head(stacked(inputs))
        return super().forward(inputs, data_samples, mode)


@MODELS.register_module(name="ValLossNeedsGtModel", force=True)
class NeedsGtModel(ToyModel):
    """Predicts from ``inputs`` alone; its loss needs ``gt`` (passed as a keyword), which no
    batch of RunnerToyDataset holds."""

    def forward(
        self, inputs: Any, data_samples: Any = None, mode: str = "tensor", **targets: Any
    ) -> Any:
        if mode == "loss":
            return self.loss(inputs, **targets)
        return super().forward(inputs, data_samples, mode)

    def loss(self, inputs: Any, gt: Any) -> dict[str, torch.Tensor]:
        return dict(loss=((self.head(stacked(inputs)) - stacked(gt)) ** 2).mean())


@MODELS.register_module(name="ValLossLabelKeyModel", force=True)
class LabelKeyModel(ToyModel):
    """Its data samples are dicts; predictions read ``target``, the loss reads ``label``, which
    ValLossTargetOnlyDataset does not provide."""

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        # The default collate makes the per-sample dicts one dict of lists.
        outputs = self.head(stacked(inputs))
        if mode == "loss":
            return dict(loss=((outputs - stacked(data_samples["label"])) ** 2).mean())
        targets = data_samples["target"]
        return [dict(pred=p, gt=g) for p, g in zip(outputs, targets, strict=True)]


@DATASETS.register_module(name="ValLossTargetOnlyDataset", force=True)
class TargetOnlyDataset(ToyDataset):
    """RunnerToyDataset with each target in a dict under 'target'."""

    def __getitem__(self, index: int) -> dict[str, Any]:
        return dict(inputs=self.inputs[index], data_samples=dict(target=self.targets[index]))


@DATASETS.register_module(name="ValLossInputsOnlyDataset", force=True)
class InputsOnlyDataset(Dataset):
    """Inputs without targets (an unlabelled validation set)."""

    metainfo: ClassVar[dict] = dict(classes=("toy",))

    def __init__(self, length: int = 7) -> None:
        self.inputs = ToyDataset(length=length).inputs

    def __len__(self) -> int:
        return len(self.inputs)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return dict(inputs=self.inputs[index])


@VISBACKENDS.register_module(name="ValLossRecordingVisBackend", force=True)
class RecordingVisBackend(BaseVisBackend):
    """Records every scalar dict it is given, in the class-level list ``scalars`` (the runner
    builds it from a config, so the test reads the class)."""

    scalars: ClassVar[list[dict[str, Any]]] = []

    def _init_env(self) -> None:
        pass

    @property
    def experiment(self) -> Any:
        return self

    @force_init_env
    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        self.scalars.append({name: value})

    @force_init_env
    def add_scalars(
        self, scalar_dict: dict, step: int = 0, file_path: Any = None, **kwargs: Any
    ) -> None:
        self.scalars.append(dict(scalar_dict))
