"""``AmpOptimWrapper``: ``OptimWrapper`` with automatic mixed precision and loss scaling."""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

from treadle.logging import print_log
from treadle.runner.device import get_device
from treadle.runner.device.autocast import (
    AUTOCAST_DTYPES,
    autocast,
    default_autocast_dtype,
    resolve_autocast_dtype,
)
from treadle.runner.registry import OPTIM_WRAPPERS

from .amp_overflow import (
    DEFAULT_MAX_CONSECUTIVE_SKIPS,
    OverflowCounter,
    StepCounter,
    check_max_consecutive_skips,
)
from .optimizer_wrapper import OptimWrapper


@contextlib.contextmanager
def _nested(
    outer: contextlib.AbstractContextManager, inner: contextlib.AbstractContextManager
) -> Iterator[None]:
    with outer, inner:
        yield


def _scaler_type(use_fsdp: bool) -> type:
    if use_fsdp:
        # FSDP shards the gradients: the scaler must agree on inf/nan across ranks.
        from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

        return ShardedGradScaler
    return torch.amp.GradScaler


def _check_scaler_kwargs(scaler_type: type, loss_scale: dict[str, Any]) -> None:
    accepted = [
        name
        for name in inspect.signature(scaler_type.__init__).parameters
        if name not in ("self", "device")
    ]
    unknown = [key for key in loss_scale if key not in accepted]
    if unknown:
        from treadle.registry.suggestions import close_matches

        hints = []
        for key in unknown:
            close = close_matches(str(key), accepted)
            hints.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        raise TypeError(
            f"loss_scale dict: {scaler_type.__name__} does not take {', '.join(hints)}; it "
            f"takes {', '.join(accepted)}"
        )


@OPTIM_WRAPPERS.register_module()
class AmpOptimWrapper(OptimWrapper):
    """``OptimWrapper`` for automatic mixed precision on the device the run uses (CUDA, NPU,
    MPS... or the CPU).

    ``optim_context(model)`` runs the forward pass under autocast in ``dtype``; with float16 the
    loss is scaled before backward by a ``torch.amp.GradScaler`` and the gradients unscaled
    before clipping and stepping (a step whose gradients overflowed is skipped). bfloat16 has
    float32's range, so by default it trains without a scaler, which also spares the scaler's
    per-step check of the gradients on the host.

    With a scaler, every skipped step is counted (``skipped_steps``; the train log line shows
    ``loss_scale`` and the ``skipped_steps`` of its interval), iteration-based parameter
    schedulers hold still on those steps (see ``ParamSchedulerHook``), and
    ``max_consecutive_skips`` skipped steps in a row stop the run with a
    :class:`~treadle.runner.optim.optimizer.amp_overflow.LossScaleCollapseError` naming the
    iteration and the scales tried.

    Args:
        loss_scale: 'dynamic' (GradScaler's defaults), a number (a static scale), or a dict of
            GradScaler arguments (``init_scale``, ``growth_interval``...).
        dtype: 'float16', 'bfloat16' or a torch dtype; None means bfloat16 on the CPU and
            float16 on accelerators.
        use_fsdp: use FSDP's ``ShardedGradScaler``, whose inf checks span the ranks.
        max_consecutive_skips: how many skipped steps in a row mean the scale has collapsed
            and stop the run (default 50); None never stops.
        **kwargs: the arguments of ``OptimWrapper`` (optimizer, accumulative_counts,
            clip_grad).

    Example:
        >>> model = torch.nn.Linear(4, 1)
        >>> wrapper = AmpOptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=0.1),
        ...                           dtype='bfloat16')
        >>> with wrapper.optim_context(model):
        ...     loss = model(torch.randn(8, 4)).pow(2).mean()
        >>> loss.dtype
        torch.bfloat16
        >>> wrapper.update_params(loss)
    """

    valid_dtypes = tuple(AUTOCAST_DTYPES)

    def __init__(
        self,
        loss_scale: str | float | dict[str, Any] = "dynamic",
        dtype: str | torch.dtype | None = None,
        use_fsdp: bool = False,
        max_consecutive_skips: int | None = DEFAULT_MAX_CONSECUTIVE_SKIPS,
        **kwargs: Any,
    ) -> None:
        check_max_consecutive_skips(max_consecutive_skips)
        super().__init__(**kwargs)
        self.cast_dtype = resolve_autocast_dtype(dtype)
        self._device_type = get_device()
        # Fails here, with the device and dtype named, rather than at the first forward pass.
        autocast(self._device_type, self.cast_dtype)
        self._autocast_dtype = self.cast_dtype or default_autocast_dtype(self._device_type)
        self._scale_update_param: float | None = None
        scaler_type = _scaler_type(use_fsdp)
        device = self._device_type
        if isinstance(loss_scale, str):
            if loss_scale != "dynamic":
                raise ValueError(
                    f"loss_scale {loss_scale!r}: the only string accepted is 'dynamic'; give a "
                    f"number for a static scale or a dict of {scaler_type.__name__} arguments"
                )
            # bfloat16 does not underflow where float32 would not: scaling buys nothing.
            enabled = self._autocast_dtype != torch.bfloat16
            self.loss_scaler = scaler_type(device, enabled=enabled)
        elif isinstance(loss_scale, (int, float)) and not isinstance(loss_scale, bool):
            if loss_scale <= 0:
                raise ValueError(f"loss_scale must be positive, got {loss_scale!r}")
            self._scale_update_param = float(loss_scale)
            self.loss_scaler = scaler_type(device, init_scale=float(loss_scale))
        elif isinstance(loss_scale, dict):
            _check_scaler_kwargs(scaler_type, loss_scale)
            self.loss_scaler = scaler_type(device, **loss_scale)
        else:
            raise TypeError(
                f"loss_scale must be 'dynamic', a number or a dict of {scaler_type.__name__} "
                f"arguments, got {type(loss_scale).__name__}: {loss_scale!r}"
            )
        self.overflow: OverflowCounter | None = None
        self._steps_taken: StepCounter | None = None
        if self.loss_scaler.is_enabled():
            self._watch_skipped_steps(max_consecutive_skips)

    def _watch_skipped_steps(self, max_consecutive_skips: int | None) -> None:
        optimizer = self.optimizer
        if getattr(optimizer, "_step_supports_amp_scaling", False):
            # The optimizer (fused=True...) takes the inf check on the device itself: it steps
            # either way, and telling a skip would need a device read per step.
            print_log(
                f"{type(optimizer).__name__} checks the scaled gradients for inf itself, so "
                f"AmpOptimWrapper cannot count the steps it skips: no skipped_steps in the log "
                f"and max_consecutive_skips is not enforced",
                logger="current",
                level=logging.WARNING,
            )
            return
        if not hasattr(optimizer, "register_step_post_hook"):
            return
        self.overflow = OverflowCounter(max_consecutive_skips)
        self._steps_taken = StepCounter(optimizer)

    @property
    def skipped_steps(self) -> int:
        """How many optimizer steps the loss scaler skipped (inf/NaN gradients) so far; 0
        without a scaler."""
        return self.overflow.total if self.overflow is not None else 0

    def _where(self) -> str:
        # The loops keep the 0-based iteration in the message hub; a wrapper used alone
        # names its own step.
        iteration = self.message_hub.get_info("iter", None)
        if isinstance(iteration, int):
            return f"iteration {iteration + 1}"
        return f"optimizer step {self._inner_count}"

    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        """Back-propagate the scaled ``loss``, counted as one call."""
        self.loss_scaler.scale(loss).backward(**kwargs)
        self._inner_count += 1

    def step(self, **kwargs: Any) -> None:
        """Unscale and clip the gradients (if ``clip_grad`` was given), step unless they
        overflowed, and update the scale."""
        if self.clip_grad_kwargs:
            self.loss_scaler.unscale_(self.optimizer)
            self._clip_grad()
        taken = self._steps_taken
        if taken is None:
            self.loss_scaler.step(self.optimizer, **kwargs)
            self.loss_scaler.update(self._scale_update_param)
            return
        taken.follow(self.optimizer)
        before = taken.count
        self.loss_scaler.step(self.optimizer, **kwargs)
        if taken.count != before:
            self.loss_scaler.update(self._scale_update_param)
            if self.overflow.consecutive:  # the end of a run of skipped steps
                self.overflow.record(False, None, "")
            return
        scale = self.loss_scaler._scale
        if isinstance(scale, torch.Tensor):
            # The scale this step used, copied on the device (no sync) before update() backs
            # it off in place.
            scale = scale.detach().clone()
        self.loss_scaler.update(self._scale_update_param)
        self.overflow.record(True, scale, self._where())

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state dict with the scaler's under ``'loss_scaler'``."""
        state_dict = super().state_dict()
        state_dict["loss_scaler"] = self.loss_scaler.state_dict()
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the optimizer's state and, if present, the scaler's."""
        state_dict = dict(state_dict)
        scaler_state = state_dict.pop("loss_scaler", None)
        if scaler_state is not None:
            if not scaler_state and self.loss_scaler.is_enabled():
                print_log(
                    "the checkpoint's loss scaler was disabled (a bfloat16 run): the loss "
                    f"scale starts again from {self.loss_scaler.get_scale()}",
                    logger="current",
                    level=logging.WARNING,
                )
            else:
                self.loss_scaler.load_state_dict(scaler_state)
        super().load_state_dict(state_dict)

    def optim_context(self, model: nn.Module) -> contextlib.AbstractContextManager:
        """The accumulation context of ``OptimWrapper`` and autocast in ``dtype``."""
        cast = torch.autocast(self._device_type, dtype=self._autocast_dtype)
        return _nested(super().optim_context(model), cast)
