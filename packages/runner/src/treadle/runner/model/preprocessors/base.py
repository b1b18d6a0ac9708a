"""BaseDataPreprocessor: moves what the data loader gives to the model's device."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn as nn

from treadle.runner.registry import MODELS
from treadle.runner.structures import BaseDataElement

from .device_moves import accelerator_device, device_of_to_args, with_index
from .prefetched import PrefetchedCopies


@MODELS.register_module()
class BaseDataPreprocessor(nn.Module):
    """Move a batch (tensors and data elements inside dicts, lists, tuples and namedtuples) to
    the device the preprocessor was moved to; subclasses add normalization, batching, mixup...

    Args:
        non_blocking: copy to the device without waiting (useful from pinned memory).

    In training on an accelerator, the train loop copies the batch's tensors ahead of the step
    (``train_cfg.device_prefetch``): :meth:`cast_data` then takes those copies (prefetched.py).

    Example:
        >>> preprocessor = BaseDataPreprocessor()
        >>> batch = preprocessor({'inputs': [torch.ones(2)], 'data_samples': None})
        >>> batch['inputs'][0].device
        device(type='cpu')
    """

    # The device copies the train loop made ahead of the step (None: it made none); see
    # prefetched.py and treadle.runner.loops.device_prefetch.
    _prefetched: PrefetchedCopies | None = None

    def __init__(self, non_blocking: bool | None = False) -> None:
        super().__init__()
        self._non_blocking = bool(non_blocking)
        self._device = torch.device("cpu")

    @property
    def device(self) -> torch.device:
        """Where :meth:`cast_data` puts tensors: the device of the last move (CPU at first)."""
        return self._device

    @property
    def _device(self) -> torch.device:
        return self.__dict__["_device_as_set"]

    @_device.setter
    def _device(self, device: torch.device | str) -> None:
        # Kept as given (MMEngine's `device` says 'cuda' after .cuda()), and with its index
        # for the comparison in cast_data: a batch already on cuda:0 is on device('cuda') too.
        device = torch.device(device)
        self.__dict__["_device_as_set"] = device
        self.__dict__["_device_here"] = with_index(device)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # A preprocessor pickled by MMEngine or treadle 0.1.0 has a plain `_device` attribute.
        legacy = state.pop("_device", None)
        super().__setstate__(state)
        if "_device_as_set" not in self.__dict__:
            self._device = legacy if legacy is not None else torch.device("cpu")

    def cast_data(self, data: Any) -> Any:
        """``data`` with every tensor and BaseDataElement in it moved to :attr:`device`;
        mappings come back as dicts, sequences as the same type, anything else unchanged."""
        if type(data) is dict:
            # The usual batch: tensors already on the device are kept without a call each.
            # (A new dict all the same: subclasses may edit what cast_data returns.)
            device = self._device_here
            return {
                key: value
                if type(value) is torch.Tensor and value.device == device
                else self.cast_data(value)
                for key, value in data.items()
            }
        if isinstance(data, torch.Tensor):
            # Already there (the usual case on CPU, or a loader that moves batches itself):
            # to() would return the same tensor, only slower.
            if data.device == self._device_here:
                return data
            prefetched = self._prefetched
            if prefetched is not None:
                copy = prefetched.take(data, self._device_here)
                if copy is not None:
                    return copy
            return data.to(self._device, non_blocking=self._non_blocking)
        if isinstance(data, BaseDataElement):
            return data.to(self._device, non_blocking=self._non_blocking)
        if type(data) is dict or isinstance(data, Mapping):  # a dict skips the ABC check
            return {key: self.cast_data(value) for key, value in data.items()}
        if isinstance(data, (str, bytes)) or data is None:
            return data
        if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
            return type(data)(*(self.cast_data(item) for item in data))
        if isinstance(data, Sequence):
            return type(data)(self.cast_data(item) for item in data)  # type: ignore[call-arg]
        return data

    def forward(self, data: Any, training: bool = False) -> Any:
        """The batch on :attr:`device`; ``training`` lets subclasses augment only in training."""
        return self.cast_data(data)

    # Every way of moving a module also moves where batches go.

    def to(self, *args: Any, **kwargs: Any) -> BaseDataPreprocessor:
        device = device_of_to_args(*args, **kwargs)
        if device is not None:
            self._device = device
        return super().to(*args, **kwargs)

    def cuda(self, device: int | str | torch.device | None = None) -> BaseDataPreprocessor:
        return self._to_accelerator("cuda", device)

    def npu(self, device: int | str | torch.device | None = None) -> BaseDataPreprocessor:
        return self._to_accelerator("npu", device)

    def mlu(self, device: int | str | torch.device | None = None) -> BaseDataPreprocessor:
        return self._to_accelerator("mlu", device)

    def musa(self, device: int | str | torch.device | None = None) -> BaseDataPreprocessor:
        return self._to_accelerator("musa", device)

    def cpu(self, *args: Any, **kwargs: Any) -> BaseDataPreprocessor:
        self._device = torch.device("cpu")
        return super().cpu()

    def _to_accelerator(
        self, device_type: str, device: int | str | torch.device | None
    ) -> BaseDataPreprocessor:
        target = accelerator_device(device_type, device)
        self._device = target
        return super().to(target)
