"""``DeepSpeedOptimWrapper``: the optimizer wrapper of a DeepSpeedStrategy run.

DeepSpeed's engine owns backward, gradient accumulation, clipping, loss scaling and the step,
so this wrapper forwards ``update_params`` to the engine and keeps only what the Runner, the
schedulers and the log need from an OptimWrapper (parameter groups, learning rates, counts).
Importing it does not import deepspeed.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch
from torch import nn

from treadle.runner.registry import OPTIM_WRAPPERS

from .optimizer_wrapper import OptimWrapper

_NO_CONTEXT = contextlib.nullcontext()
# What an OptimWrapper argument is called in DeepSpeed's terms.
_STRATEGY_EQUIVALENT = {
    "accumulative_counts": "DeepSpeedStrategy(gradient_accumulation_steps=N)",
    "clip_grad": "DeepSpeedStrategy(gradient_clipping=max_norm)",
    "loss_scale": "DeepSpeedStrategy(fp16=dict(enabled=True, loss_scale=...))",
    "dtype": "DeepSpeedStrategy(fp16=dict(enabled=True)) or bf16=dict(enabled=True)",
}


@OPTIM_WRAPPERS.register_module()
class DeepSpeedOptimWrapper(OptimWrapper):
    """Train through a DeepSpeed engine: ``update_params(loss)`` is ``engine.backward(loss)``
    then ``engine.step()`` (which updates only at the end of an accumulation).

    ``model`` is the DeepSpeed engine; the strategy sets it when it builds the engine. The
    optimizer state lives in the engine's checkpoint files: ``state_dict()`` holds only what
    the wrapper adds (``base_param_settings``).

    Args:
        optimizer: the built torch optimizer, over the model's parameters; DeepSpeed wraps it
            (ZeRO partitions its state) and it keeps the parameter groups that schedulers
            change.

    Example:
        >>> optim_wrapper = dict(type='DeepSpeedOptimWrapper',
        ...                      optimizer=dict(type='AdamW', lr=1e-3))
        >>> runner = FlexibleRunner(..., strategy=dict(type='DeepSpeedStrategy',
        ...                         zero_optimization=dict(stage=2)),
        ...                         optim_wrapper=optim_wrapper)  # doctest: +SKIP
    """

    def __init__(self, optimizer: torch.optim.Optimizer, **kwargs: Any) -> None:
        if kwargs:
            hints = [
                f"{name} (use {_STRATEGY_EQUIVALENT[name]})"
                if name in _STRATEGY_EQUIVALENT
                else name
                for name in kwargs
            ]
            raise TypeError(
                "DeepSpeedOptimWrapper takes only the optimizer; DeepSpeed's engine does "
                f"accumulation, clipping and precision itself. Got: {', '.join(hints)}"
            )
        super().__init__(optimizer)
        self._model: Any = None

    @property
    def model(self) -> Any:
        """The DeepSpeed engine this wrapper steps."""
        if self._model is None:
            raise RuntimeError(
                "DeepSpeedOptimWrapper has no DeepSpeed engine yet: it is set when "
                "DeepSpeedStrategy builds the engine with this optimizer (the first train_step). "
                "An engine built earlier without an optimizer (by val() or test() before "
                "train()) cannot train: train with a new runner or strategy"
            )
        return self._model

    @model.setter
    def model(self, engine: Any) -> None:
        self._model = engine

    def update_params(  # type: ignore[override]
        self,
        loss: torch.Tensor,
        step_kwargs: dict[str, Any] | None = None,
        zero_kwargs: dict[str, Any] | None = None,
    ) -> None:
        """``engine.backward(loss)`` then ``engine.step()``; the engine divides the loss by
        its accumulation steps and zeroes the gradients after an update."""
        self.backward(loss)
        self.step(**(step_kwargs or {}))

    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        """``engine.backward(loss)``, counted as one call."""
        self.model.backward(loss, **kwargs)
        self._inner_count += 1

    def step(self, **kwargs: Any) -> None:
        """``engine.step()``: an update at the end of an accumulation, else nothing."""
        self.model.step(**kwargs)

    def zero_grad(self, **kwargs: Any) -> None:
        """``engine.zero_grad()`` (the engine also clears them after each update)."""
        self.model.zero_grad(**kwargs)

    def optim_context(self, model: nn.Module) -> contextlib.AbstractContextManager:
        """No context: the engine decides when gradients are reduced."""
        return _NO_CONTEXT

    def state_dict(self) -> dict[str, Any]:
        """What the engine's checkpoint does not hold: ``base_param_settings``, if any."""
        if self.base_param_settings is None:
            return {}
        return {"base_param_settings": dict(self.base_param_settings)}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load what ``state_dict()`` returned (the optimizer state comes from the engine)."""
        base_param_settings = state_dict.get("base_param_settings")
        if base_param_settings is not None:
            self.base_param_settings = dict(base_param_settings)
