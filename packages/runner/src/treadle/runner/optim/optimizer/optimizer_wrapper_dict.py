"""``OptimWrapperDict``: several named optimizer wrappers saved, logged and scheduled as one."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, NoReturn

import torch
from torch import nn

from .base import BaseOptimWrapper
from .errors import OptimWrapperTypeError
from .optimizer_wrapper import OptimWrapper


class OptimWrapperDict(OptimWrapper):
    """Named optimizer wrappers (a GAN's generator and discriminator...) behind one object.

    The runner saves and loads them, logs their learning rates (``'gen.lr'``) and schedules
    them together. Updating stays with each wrapper: a loss belongs to one of them, so
    ``update_params``, ``backward``, ``step`` and ``optim_context`` raise here; use
    ``optim_wrapper['gen'].update_params(loss)``.

    Args:
        **optim_wrappers: the wrappers by name.

    Example:
        >>> gen, disc = torch.nn.Linear(2, 2), torch.nn.Linear(2, 1)
        >>> wrappers = OptimWrapperDict(
        ...     gen=OptimWrapper(torch.optim.SGD(gen.parameters(), lr=0.1)),
        ...     disc=OptimWrapper(torch.optim.Adam(disc.parameters(), lr=0.01)))
        >>> wrappers.get_lr()
        {'gen.lr': [0.1], 'disc.lr': [0.01]}
        >>> wrappers['gen'].update_params(gen(torch.ones(1, 2)).sum())
    """

    def __init__(self, **optim_wrappers: BaseOptimWrapper) -> None:
        for name, wrapper in optim_wrappers.items():
            if not isinstance(wrapper, BaseOptimWrapper):
                raise OptimWrapperTypeError(
                    f"`OptimWrapperDict` only accept optimizer wrappers, but {name}= is a "
                    f"{type(wrapper).__name__}; wrap an optimizer first: "
                    f"{name}=OptimWrapper(optimizer)"
                )
        self.optim_wrappers: dict[str, BaseOptimWrapper] = optim_wrappers

    def _per_wrapper(self, method: str) -> NoReturn:
        raise NotImplementedError(
            f"OptimWrapperDict.{method}: `{method}` should be called by each optimizer wrapper "
            f"separately (a loss belongs to one optimizer), e.g. "
            f"optim_wrapper[{next(iter(self.optim_wrappers), 'name')!r}].{method}(...); the "
            f"wrappers here: {', '.join(self.optim_wrappers) or 'none'}"
        )

    def update_params(
        self,
        loss: torch.Tensor,
        step_kwargs: dict[str, Any] | None = None,
        zero_kwargs: dict[str, Any] | None = None,
    ) -> None:
        """Not defined for several wrappers: raises NotImplementedError."""
        self._per_wrapper("update_params")

    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        """Not defined for several wrappers: raises NotImplementedError."""
        self._per_wrapper("backward")

    def step(self, **kwargs: Any) -> None:
        """Not defined for several wrappers: raises NotImplementedError."""
        self._per_wrapper("step")

    def optim_context(self, model: nn.Module) -> contextlib.AbstractContextManager:
        """Not defined for several wrappers: raises NotImplementedError."""
        self._per_wrapper("optim_context")

    def scale_loss(self, loss: torch.Tensor) -> torch.Tensor:
        """Not defined for several wrappers: raises NotImplementedError."""
        self._per_wrapper("scale_loss")

    def should_update(self) -> bool:
        """Not defined for several wrappers: raises NotImplementedError."""
        self._per_wrapper("should_update")

    def should_sync(self) -> bool:
        """Not defined for several wrappers: raises NotImplementedError."""
        self._per_wrapper("should_sync")

    def zero_grad(self, **kwargs: Any) -> None:
        """Clear the gradients of every wrapper."""
        for wrapper in self.optim_wrappers.values():
            wrapper.zero_grad(**kwargs)

    def initialize_count_status(self, model: nn.Module, init_counts: int, max_counts: int) -> None:
        """Does nothing: which model part each wrapper updates is not known here, so each
        wrapper is initialized by whoever uses it."""

    @property
    def param_groups(self) -> dict[str, list[dict[str, Any]]]:
        """``{name: that wrapper's param_groups}``."""
        return {name: wrapper.param_groups for name, wrapper in self.optim_wrappers.items()}

    @property
    def defaults(self) -> dict[str, dict[str, Any]]:
        """``{name: that wrapper's defaults}``."""
        return {name: wrapper.defaults for name, wrapper in self.optim_wrappers.items()}

    def get_lr(self) -> dict[str, list[float]]:
        """Every wrapper's learning rates, keyed ``'name.lr'`` (and ``'name.base_lr'``)."""
        lrs: dict[str, list[float]] = {}
        for name, wrapper in self.optim_wrappers.items():
            for key, values in wrapper.get_lr().items():
                lrs[f"{name}.{key}"] = values
        return lrs

    def get_momentum(self) -> dict[str, list[float]]:
        """Every wrapper's momenta, keyed ``'name.momentum'``."""
        return {
            f"{name}.momentum": wrapper.get_momentum()["momentum"]
            for name, wrapper in self.optim_wrappers.items()
        }

    def state_dict(self) -> dict[str, Any]:
        """``{name: that wrapper's state_dict()}``."""
        return {name: wrapper.state_dict() for name, wrapper in self.optim_wrappers.items()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load ``{name: state}`` into the wrappers of those names; every name is checked
        before any state is loaded."""
        unknown = [name for name in state_dict if name not in self.optim_wrappers]
        if unknown:
            raise KeyError(
                f"OptimWrapperDict.load_state_dict: the state holds {', '.join(map(repr, unknown))}"
                f", which this OptimWrapperDict lacks; it has "
                f"{', '.join(map(repr, self.optim_wrappers)) or 'none'}"
            )
        for name, state in state_dict.items():
            self.optim_wrappers[name].load_state_dict(state)

    def items(self) -> Iterator[tuple[str, BaseOptimWrapper]]:
        """The (name, wrapper) pairs."""
        yield from self.optim_wrappers.items()

    def values(self) -> Iterator[BaseOptimWrapper]:
        """The wrappers."""
        yield from self.optim_wrappers.values()

    def keys(self) -> Iterator[str]:
        """The names."""
        yield from self.optim_wrappers.keys()

    def __iter__(self) -> Iterator[str]:
        return iter(self.optim_wrappers)

    def __getitem__(self, name: str) -> BaseOptimWrapper:
        wrapper = self.optim_wrappers.get(name)
        if wrapper is None:
            from treadle.registry.suggestions import close_matches

            close = close_matches(str(name), self.optim_wrappers)
            hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
            raise KeyError(
                f"OptimWrapperDict has no wrapper {name!r}{hint}; it has "
                f"{', '.join(map(repr, self.optim_wrappers)) or 'none'} (the names come from "
                f"the optim_wrapper config's keys or the constructor)"
            )
        return wrapper

    def __contains__(self, name: object) -> bool:
        return name in self.optim_wrappers

    def __len__(self) -> int:
        return len(self.optim_wrappers)

    def __repr__(self) -> str:
        return "".join(
            f"name: {name}\n{wrapper!r}" for name, wrapper in self.optim_wrappers.items()
        )
