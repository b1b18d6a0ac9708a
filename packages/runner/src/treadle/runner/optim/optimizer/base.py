"""``BaseOptimWrapper``: what every optimizer wrapper offers the runner, hooks and schedulers."""

from __future__ import annotations

from abc import ABCMeta, abstractmethod
from typing import Any

import torch

# What the wrappers call on an optimizer; anything with these works (torch, ZeRO, bitsandbytes).
_OPTIMIZER_API = ("param_groups", "step", "zero_grad", "state_dict", "load_state_dict")


def check_optimizer(optimizer: Any) -> None:
    """Raise TypeError unless ``optimizer`` is a built optimizer (not its config)."""
    missing = [name for name in _OPTIMIZER_API if not hasattr(optimizer, name)]
    if not missing:
        return
    if isinstance(optimizer, dict):
        raise TypeError(
            f"optimizer must be a built optimizer, got the config {optimizer!r}; build the "
            f"wrapper with build_optim_wrapper(model, dict(optimizer=...)) or build the "
            f"optimizer first with OPTIMIZERS.build"
        )
    raise TypeError(
        f"optimizer must be a torch.optim.Optimizer (or have {', '.join(_OPTIMIZER_API)}), got "
        f"{type(optimizer).__name__}, which lacks {', '.join(missing)}"
    )


class BaseOptimWrapper(metaclass=ABCMeta):
    """One optimizer behind the interface the training loop uses.

    Subclasses say how a loss becomes a parameter update (``update_params``, ``backward``,
    ``step``, ``zero_grad``); this class gives the rest: state dicts, parameter groups and the
    learning rates and momenta the log shows.

    With several parameter groups, ``param_groups`` ends with one extra group,
    ``base_param_settings``, built from the optimizer's defaults: parameter schedulers update
    it like the others, so the log can show the schedule's base learning rate (``base_lr``).

    Args:
        optimizer: the built optimizer.

    Example:
        >>> class Plain(BaseOptimWrapper):
        ...     def update_params(self, loss):
        ...         self.backward(loss); self.step(); self.zero_grad()
        ...     def backward(self, loss, **kwargs):
        ...         loss.backward(**kwargs)
        ...     def zero_grad(self, **kwargs):
        ...         self.optimizer.zero_grad(**kwargs)
        ...     def step(self, **kwargs):
        ...         self.optimizer.step(**kwargs)
        >>> layer = torch.nn.Linear(2, 1)
        >>> Plain(torch.optim.SGD(layer.parameters(), lr=0.1)).get_lr()
        {'lr': [0.1]}
    """

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        self.base_param_settings: dict[str, Any] | None = None
        if len(optimizer.param_groups) > 1:
            # A placeholder tensor keeps the group's shape (a 'params' entry) for schedulers.
            self.base_param_settings = {
                "params": torch.tensor([0.0], dtype=torch.float),
                **optimizer.defaults,
            }

    @abstractmethod
    def update_params(self, *args: Any, **kwargs: Any) -> None:
        """Turn a loss into an update of the parameters."""

    @abstractmethod
    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        """Back-propagate ``loss``."""

    @abstractmethod
    def zero_grad(self, **kwargs: Any) -> None:
        """Clear the gradients."""

    @abstractmethod
    def step(self, **kwargs: Any) -> None:
        """Update the parameters from their gradients."""

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state dict, with ``base_param_settings`` when there is one."""
        state_dict = self.optimizer.state_dict()
        if self.base_param_settings is not None:
            state_dict["base_param_settings"] = dict(self.base_param_settings)
        return state_dict

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load what ``state_dict()`` returned (the caller's dict is left as it was)."""
        state_dict = dict(state_dict)
        base_param_settings = state_dict.pop("base_param_settings", None)
        if base_param_settings is not None:
            self.base_param_settings = base_param_settings
        self.optimizer.load_state_dict(state_dict)

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        """The optimizer's parameter groups, then ``base_param_settings`` if there is one."""
        if self.base_param_settings is not None:
            return [*self.optimizer.param_groups, self.base_param_settings]
        return self.optimizer.param_groups

    @property
    def defaults(self) -> dict[str, Any]:
        """The optimizer's defaults."""
        return self.optimizer.defaults

    def get_lr(self) -> dict[str, list[float]]:
        """``{'lr': [one per group]}``, preceded by ``'base_lr'`` with several groups."""
        lrs: dict[str, list[float]] = {}
        if self.base_param_settings is not None:
            lrs["base_lr"] = [self.base_param_settings["lr"]]
        lrs["lr"] = [group["lr"] for group in self.optimizer.param_groups]
        return lrs

    def get_momentum(self) -> dict[str, list[float]]:
        """``{'momentum': [one per group]}``: SGD's momentum, Adam's first beta, else 0."""
        momenta = []
        for group in self.optimizer.param_groups:
            if "momentum" in group:
                momenta.append(group["momentum"])
            elif "betas" in group:
                momenta.append(group["betas"][0])
            else:
                momenta.append(0)
        return {"momentum": momenta}
