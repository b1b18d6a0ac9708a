"""``OptimWrapper``: one optimizer with gradient accumulation and clipping, in full precision."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from treadle.logging import MessageHub, print_log
from treadle.runner.registry import OPTIM_WRAPPERS

from .base import BaseOptimWrapper
from .clip import parameters_with_grad, parse_clip_grad

# nullcontext keeps no state: one instance serves every step.
_NO_CONTEXT = contextlib.nullcontext()


def _has_batch_norm(model: Any) -> bool:
    if not isinstance(model, nn.Module):
        return False
    return any(isinstance(module, nn.modules.batchnorm._BatchNorm) for module in model.modules())


def _check_count(name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")


@OPTIM_WRAPPERS.register_module()
class OptimWrapper(BaseOptimWrapper):
    """Update a model's parameters from its loss: back-propagate, accumulate, clip, step.

    ``update_params(loss)`` does a whole training step's update. With
    ``accumulative_counts=n`` the parameters are updated every n calls, each loss divided by n
    so that the update equals one over a batch n times larger. Told the total number of calls
    (``initialize_count_status``), the last, shorter accumulation of the run is divided by its
    own length instead, and its gradients are not lost.

    Args:
        optimizer: the built optimizer.
        accumulative_counts: update the parameters every this many ``update_params`` calls.
        clip_grad: None, or the arguments of ``torch.nn.utils.clip_grad_norm_``
            (``dict(max_norm=1.0)``, optionally ``type='norm'``, ``norm_type=2``) or of
            ``clip_grad_value_`` (``dict(type='value', clip_value=0.5)``). The total norm
            before clipping goes to the message hub as ``'train/grad_norm'``, as a tensor left
            on its device.

    Example:
        >>> model = torch.nn.Linear(4, 1)
        >>> wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1),
        ...                        accumulative_counts=2, clip_grad=dict(max_norm=1.0))
        >>> wrapper.initialize_count_status(model, init_counts=0, max_counts=10)
        >>> for _ in range(10):
        ...     with wrapper.optim_context(model):  # skips DDP's gradient sync until an update
        ...         loss = model(torch.randn(8, 4)).pow(2).mean()
        ...     wrapper.update_params(loss)
        >>> wrapper.inner_count
        10
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        accumulative_counts: int = 1,
        clip_grad: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(optimizer)
        _check_count("accumulative_counts", accumulative_counts, 1)
        self._accumulative_counts = accumulative_counts
        self.clip_grad_kwargs: dict[str, Any] | None = None
        self.clip_func = None
        self.grad_name: str | None = None
        if clip_grad is not None:
            self.clip_func, self.grad_name, self.clip_grad_kwargs = parse_clip_grad(clip_grad)
            # Formatted once here, not at every step.
            self._grad_key = f"train/{self.grad_name}"
        self._message_hub: MessageHub | None = None
        self._inner_count = 0
        # No method of the update path overridden: update_params may take its short path.
        self._plain_step = _steps_plainly(type(self))
        # -1: the number of calls is unknown, every accumulation is a full one.
        self._max_counts = -1
        self._remainder_counts = -1

    @property
    def message_hub(self) -> MessageHub:
        """Where the gradient norm goes: the one set here, else the current ``MessageHub``
        (looked up when a norm is recorded, so a wrapper built before the runner's hub logs
        into it)."""
        if self._message_hub is not None:
            return self._message_hub
        return MessageHub.get_current_instance()

    @message_hub.setter
    def message_hub(self, message_hub: MessageHub | None) -> None:
        self._message_hub = message_hub

    def update_params(
        self,
        loss: torch.Tensor,
        step_kwargs: dict[str, Any] | None = None,
        zero_kwargs: dict[str, Any] | None = None,
    ) -> None:
        """Back-propagate ``loss`` (divided by the accumulation factor); on an update call,
        also clip, step (with ``step_kwargs``) and zero the gradients (with ``zero_kwargs``)."""
        own = self.__dict__
        if (
            self._accumulative_counts == 1
            and self._plain_step
            and not self.clip_grad_kwargs
            and not step_kwargs
            and not zero_kwargs
            # No method of the update path replaced on this instance (as tests do with mocks,
            # and MMEngine's update_params then calls them).
            and "backward" not in own
            and "step" not in own
            and "zero_grad" not in own
            and "scale_loss" not in own
            and "should_update" not in own
        ):
            # The usual step, spelled out: this runs once per training step, and each method
            # call less is measurable next to a small model's forward and backward.
            loss.backward()
            self._inner_count += 1
            optimizer = self.optimizer
            optimizer.step()
            optimizer.zero_grad()
            return
        self.backward(self.scale_loss(loss))
        if self.should_update():
            if step_kwargs:
                self.step(**step_kwargs)
            else:
                self.step()
            if zero_kwargs:
                self.zero_grad(**zero_kwargs)
            else:
                self.zero_grad()

    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        """``loss.backward(**kwargs)``, counted as one call. The loss is used as given: a loop
        that calls ``backward`` itself divides it with ``scale_loss`` first."""
        loss.backward(**kwargs)
        self._inner_count += 1

    def zero_grad(self, **kwargs: Any) -> None:
        """``optimizer.zero_grad(**kwargs)``."""
        self.optimizer.zero_grad(**kwargs)

    def step(self, **kwargs: Any) -> None:
        """Clip the gradients (if ``clip_grad`` was given), then ``optimizer.step(**kwargs)``."""
        if self.clip_grad_kwargs:
            self._clip_grad()
        self.optimizer.step(**kwargs)

    def optim_context(self, model: nn.Module) -> contextlib.AbstractContextManager:
        """The context to run the forward pass in: the model's ``no_sync()`` (DDP) on calls
        that accumulate without updating, so gradients are all-reduced only once per update."""
        if self._accumulative_counts == 1:  # every call syncs
            return _NO_CONTEXT
        if not self.should_sync() and hasattr(model, "no_sync"):
            return model.no_sync()
        return _NO_CONTEXT

    def _clip_grad(self) -> None:
        params = parameters_with_grad(self.optimizer.param_groups)
        if not params:
            return
        size = self.clip_func(params, **self.clip_grad_kwargs)
        # clip_grad_value_ measures nothing; the norm stays a device tensor (no sync here).
        if size is not None:
            self.message_hub.update_scalar(self._grad_key, size)

    def initialize_count_status(self, model: nn.Module, init_counts: int, max_counts: int) -> None:
        """Start counting ``update_params`` calls at ``init_counts`` (the iteration a run
        resumes from) out of ``max_counts`` in the whole run, so the last accumulation can be
        shorter than ``accumulative_counts``."""
        _check_count("init_counts", init_counts, 0)
        _check_count("max_counts", max_counts, 1)
        if init_counts > max_counts:
            raise ValueError(
                f"init_counts ({init_counts}) is past max_counts ({max_counts}): the run has "
                f"no update_params call left"
            )
        self._inner_count = init_counts
        self._max_counts = max_counts
        self._remainder_counts = max_counts % self._accumulative_counts
        if init_counts % self._accumulative_counts:
            print_log(
                f"resuming at count {init_counts}, inside an accumulation of "
                f"{self._accumulative_counts} calls: the gradients of the "
                f"{init_counts % self._accumulative_counts} calls before it were not saved, "
                f"so the next update averages fewer batches",
                logger="current",
                level=logging.WARNING,
            )
        if self._accumulative_counts > 1 and _has_batch_norm(model):
            print_log(
                "gradient accumulation with BatchNorm layers: their statistics see the small "
                "batches, not the accumulated one, which may lower accuracy slightly",
                logger="current",
                level=logging.WARNING,
            )

    def should_update(self) -> bool:
        """Whether the call just counted ends an accumulation (the parameters are updated)."""
        return (
            self._inner_count % self._accumulative_counts == 0
            or self._inner_count == self._max_counts
        )

    def should_sync(self) -> bool:
        """Whether the next call ends an accumulation, so its backward must sync gradients
        (asked before that call is counted)."""
        upcoming = self._inner_count + 1
        return upcoming % self._accumulative_counts == 0 or upcoming == self._max_counts

    def scale_loss(self, loss: torch.Tensor) -> torch.Tensor:
        """``loss`` divided by the number of calls in the current accumulation."""
        if self._accumulative_counts == 1:
            # Dividing by 1 would cost a kernel and an allocation per step for nothing.
            return loss
        if self._max_counts == -1:
            return loss / self._accumulative_counts
        if self._inner_count >= self._max_counts:
            raise RuntimeError(
                f"update_params call {self._inner_count + 1} is past max_counts "
                f"({self._max_counts}) given to initialize_count_status: call it again with "
                f"the new total to train longer"
            )
        if self._inner_count < self._max_counts - self._remainder_counts:
            return loss / self._accumulative_counts
        return loss / self._remainder_counts

    @property
    def inner_count(self) -> int:
        """How many ``update_params`` (or ``backward``) calls have been counted."""
        return self._inner_count

    @property
    def max_counts(self) -> int:
        """The total number of calls of the run (``initialize_count_status``); -1 if unknown."""
        return self._max_counts

    def __repr__(self) -> str:
        return (
            f"Type: {type(self).__name__}\n"
            f"_accumulative_counts: {self._accumulative_counts}\n"
            f"optimizer: \n{self.optimizer!r}\n"
        )


def _steps_plainly(cls: type) -> bool:
    """Whether ``cls`` backs, steps and zeroes as OptimWrapper does (no method of the update
    path overridden), so that update_params may take its short path."""
    names = ("backward", "step", "zero_grad", "scale_loss", "should_update", "update_params")
    return all(getattr(cls, name) is getattr(OptimWrapper, name) for name in names)
