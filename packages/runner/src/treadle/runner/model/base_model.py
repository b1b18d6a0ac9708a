"""BaseModel: a module that knows its training, validation and test steps."""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

import torch
import torch.nn as nn

from treadle.runner.registry import MODELS

from .base_module import BaseModule
from .preprocessors import BaseDataPreprocessor
from .preprocessors.device_moves import accelerator_device, device_of_to_args


class OptimWrapperLike(Protocol):
    """What a train step needs of an optimizer wrapper (treadle.runner.optim.OptimWrapper and
    its subclasses): the optim layer sits above the model layer, so it is named by shape."""

    def optim_context(self, model: nn.Module) -> AbstractContextManager: ...

    def update_params(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None: ...


def run_forward(model: nn.Module, data: Any, mode: str) -> Any:
    """Call ``model`` on a preprocessed batch: a dict as keyword arguments, a list or tuple as
    positional arguments, with ``mode``."""
    if type(data) is dict or isinstance(data, Mapping):  # a dict skips the ABC check
        return model(**data, mode=mode)
    if isinstance(data, (list, tuple)):
        return model(*data, mode=mode)
    raise TypeError(
        f"the data preprocessor must return a dict, list or tuple for forward, got "
        f"{type(data).__name__}"
    )


def reduce_loss_value(name: str, value: Any) -> torch.Tensor:
    """The mean of a tensor, or the sum of the means of a list of tensors."""
    if isinstance(value, torch.Tensor):
        # A scalar is its own mean: returning it as is spares an autograd node (a kernel in
        # forward and one in backward) per step. Integer scalars still go through mean(),
        # which rejects them as MMEngine does.
        if value.ndim == 0 and value.is_floating_point():
            return value
        return value.mean()
    if (
        isinstance(value, (list, tuple))
        and value
        and all(isinstance(item, torch.Tensor) for item in value)
    ):
        total = value[0].mean()
        for item in value[1:]:
            total = total + item.mean()
        return total
    what = (
        "an empty list"
        if isinstance(value, (list, tuple)) and not value
        else (f"{type(value).__name__}: {value!r}")
    )
    raise TypeError(
        f"the losses returned by forward(mode='loss') must be tensors or lists of tensors; "
        f"{name!r} is {what}"
    )


class BaseModel(BaseModule, metaclass=ABCMeta):
    """The base of every model the runner trains: subclasses write ``forward(inputs,
    data_samples, mode)`` and inherit the train, val and test steps.

    ``mode`` is 'loss' (return a dict of losses), 'predict' (return predictions for the
    evaluator) or 'tensor' (return raw outputs). A train step preprocesses the batch, runs
    ``forward(mode='loss')`` inside the optimizer wrapper's context (autocast), sums the losses
    with :meth:`parse_losses` and lets the wrapper update the parameters.

    Args:
        data_preprocessor: a module, or a config built from MODELS; None means a
            BaseDataPreprocessor (moves the batch to the model's device).
        init_cfg: weight initialization, as for BaseModule.

    Example:
        >>> class Regressor(BaseModel):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.linear = nn.Linear(2, 1)
        ...     def forward(self, inputs, data_samples=None, mode='tensor'):
        ...         outputs = self.linear(inputs)
        ...         if mode == 'loss':
        ...             return {'loss_mse': ((outputs - data_samples) ** 2).mean()}
        ...         return outputs
        >>> model = Regressor()
        >>> loss, log_vars = model.parse_losses(
        ...     model(torch.ones(4, 2), torch.zeros(4, 1), mode='loss'))
        >>> sorted(log_vars)
        ['loss', 'loss_mse']
    """

    def __init__(
        self,
        data_preprocessor: Mapping | nn.Module | None = None,
        init_cfg: dict | list[dict] | None = None,
    ) -> None:
        super().__init__(init_cfg)
        if data_preprocessor is None:
            data_preprocessor = BaseDataPreprocessor()
        elif isinstance(data_preprocessor, Mapping):
            data_preprocessor = MODELS.build(data_preprocessor)
        if not isinstance(data_preprocessor, nn.Module):
            raise TypeError(
                f"data_preprocessor should be a config dict, an nn.Module or None, got "
                f"{type(data_preprocessor).__name__}: {data_preprocessor!r}"
            )
        self.data_preprocessor = data_preprocessor

    def train_step(self, data: Any, optim_wrapper: OptimWrapperLike) -> dict[str, torch.Tensor]:
        """One training iteration on ``data`` (a batch from the data loader): returns the
        detached losses to log, as tensors (turning them into numbers would wait for the
        device)."""
        with optim_wrapper.optim_context(self):
            data = self.data_preprocessor(data, True)
            if type(data) is dict:  # the usual batch, without the detour through _run_forward
                losses = self(**data, mode="loss")
            else:
                losses = self._run_forward(data, mode="loss")
        if type(losses) is dict and len(losses) == 1:
            # One loss named 'loss', a float scalar (the common case): parse_losses would
            # return it as is.
            loss = losses.get("loss")
            if type(loss) is torch.Tensor and loss.ndim == 0 and loss.is_floating_point():
                optim_wrapper.update_params(loss)
                return {"loss": loss.detach()}
        parsed_losses, log_vars = self.parse_losses(losses)
        optim_wrapper.update_params(parsed_losses)
        return log_vars

    def val_step(self, data: Any) -> list:
        """The predictions of ``forward(mode='predict')`` on a batch, for the evaluator."""
        data = self.data_preprocessor(data, False)
        return self._run_forward(data, mode="predict")

    def test_step(self, data: Any) -> list:
        """The predictions on a test batch; the same as :meth:`val_step`."""
        data = self.data_preprocessor(data, False)
        return self._run_forward(data, mode="predict")

    def parse_losses(
        self, losses: Mapping[str, Any]
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """The loss to optimize and the values to log, from what ``forward(mode='loss')``
        returned.

        Each value is reduced to its mean (a list of tensors to the sum of their means); the
        values whose key contains 'loss' are summed into the returned loss. ``log_vars`` holds
        that sum under 'loss' and then every reduced value, all detached and still on the
        device: nothing here waits for the device.
        """
        if not isinstance(losses, Mapping):
            raise TypeError(
                f"forward(mode='loss') must return a dict of losses, got {type(losses).__name__}"
            )
        if len(losses) == 1 and "loss" in losses:
            # The common case of one loss named 'loss': nothing to sum.
            loss = reduce_loss_value("loss", losses["loss"])
            return loss, {"loss": loss.detach()}
        reduced = {name: reduce_loss_value(name, value) for name, value in losses.items()}
        loss: torch.Tensor | None = None
        for name, value in reduced.items():
            if "loss" in name:
                loss = value if loss is None else loss + value
        if loss is None:
            raise ValueError(
                f"forward(mode='loss') returned no key containing 'loss' (keys: "
                f"{list(losses)}), so there is nothing to optimize; name the losses "
                f"'loss' or 'loss_*'"
            )
        log_vars = {"loss": loss.detach()}
        log_vars.update((name, value.detach()) for name, value in reduced.items() if name != "loss")
        return loss, log_vars

    @abstractmethod
    def forward(
        self, inputs: torch.Tensor, data_samples: list | None = None, mode: str = "tensor"
    ) -> dict[str, torch.Tensor] | list | torch.Tensor | tuple:
        """Losses ('loss'), predictions ('predict') or raw outputs ('tensor') for a batch
        as the data preprocessor gives it."""

    def _run_forward(self, data: Any, mode: str) -> Any:
        return run_forward(self, data, mode)

    # Moving the model also moves where its data preprocessors put batches.

    def to(self, *args: Any, **kwargs: Any) -> BaseModel:
        device = device_of_to_args(*args, **kwargs)
        if device is not None:
            self._set_device(device)
        return super().to(*args, **kwargs)

    def cuda(self, device: int | str | torch.device | None = None) -> BaseModel:
        return self._to_accelerator("cuda", device)

    def npu(self, device: int | str | torch.device | None = None) -> BaseModel:
        return self._to_accelerator("npu", device)

    def mlu(self, device: int | str | torch.device | None = None) -> BaseModel:
        return self._to_accelerator("mlu", device)

    def musa(self, device: int | str | torch.device | None = None) -> BaseModel:
        return self._to_accelerator("musa", device)

    def cpu(self, *args: Any, **kwargs: Any) -> BaseModel:
        self._set_device(torch.device("cpu"))
        return super().cpu()

    def _to_accelerator(
        self, device_type: str, device: int | str | torch.device | None
    ) -> BaseModel:
        target = accelerator_device(device_type, device)
        self._set_device(target)
        return super().to(target)

    def _set_device(self, device: torch.device) -> None:
        for module in self.modules():
            if isinstance(module, BaseDataPreprocessor):
                module._device = device
