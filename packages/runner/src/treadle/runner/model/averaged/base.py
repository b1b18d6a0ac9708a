"""``BaseAveragedModel``: a frozen copy of a model whose weights are a running average of the
model's (SWA, EMA)."""

from __future__ import annotations

from copy import deepcopy
from typing import Any, NoReturn

import torch
from torch import Tensor, nn

from treadle.registry.suggestions import close_matches


class BaseAveragedModel(nn.Module):
    """Keep ``self.module``, a copy of ``model``, as a running average of its weights.

    Call ``update_parameters(model)`` after each optimizer step: the first call copies the
    weights, later calls (every ``interval``-th) average them in place through ``avg_func``.
    ``forward`` runs the averaged copy. The update count is the ``steps`` buffer, saved in
    ``state_dict``; a host-side mirror of it decides when to average, so an update never waits
    for the device (MMEngine reads the device counter on every call).

    Args:
        model: the model to average.
        interval: average every ``interval`` calls of ``update_parameters``.
        device: where the averaged copy lives (default: where ``model`` is).
        update_buffers: average the floating-point buffers too (BatchNorm statistics);
            otherwise buffers are copied from ``model`` at each update.

    Example:
        >>> class Mean(BaseAveragedModel):
        ...     def avg_func(self, averaged_param, source_param, steps):
        ...         averaged_param.add_(source_param - averaged_param, alpha=1 / (steps + 1))
        >>> model = nn.Linear(2, 2)
        >>> averaged = Mean(model)
        >>> averaged.update_parameters(model)
        >>> int(averaged.steps)
        1
    """

    def __init__(
        self,
        model: nn.Module,
        interval: int = 1,
        device: torch.device | str | None = None,
        update_buffers: bool = False,
    ) -> None:
        super().__init__()
        if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
            raise ValueError(
                f"{type(self).__name__}: interval must be a positive int, got {interval!r}"
            )
        self.module = deepcopy(model).requires_grad_(False)
        if device is not None:
            self.module = self.module.to(device)
        self.interval = interval
        self.update_buffers = update_buffers
        self.register_buffer("steps", torch.tensor(0, dtype=torch.long, device=device))
        self._host_steps = 0
        self.register_load_state_dict_post_hook(_after_load)

    @property
    def avg_parameters(self) -> dict[str, Tensor]:
        """The averaged tensors by name: the parameters, or the whole state with
        ``update_buffers``."""
        return self._targets().tensors

    def _targets(self) -> _Targets:
        # Walking the module tree costs more than the averaging itself on small layers, so the
        # tensors are looked up once; `_apply` (.to, .cuda, .double...) replaces buffers and
        # drops this cache, and so does assigning another `self.module`.
        cached = self.__dict__.get("_targets_cache")
        if cached is None or cached.owner is not self.module:
            cached = _Targets(self.module, self.update_buffers)
            self.__dict__["_targets_cache"] = cached
        return cached

    def _apply(self, fn: Any, *args: Any, **kwargs: Any) -> BaseAveragedModel:
        self.__dict__.pop("_targets_cache", None)
        return super()._apply(fn, *args, **kwargs)

    def avg_func(self, averaged_param: Tensor, source_param: Tensor, steps: int) -> None:
        """Average ``source_param`` into ``averaged_param`` in place; ``steps`` is the number of
        updates so far."""
        raise NotImplementedError(f"{type(self).__name__} must implement avg_func")

    def average(self, averaged: list[Tensor], sources: list[Tensor], steps: int) -> None:
        """Average every floating-point tensor at once; by default one ``avg_func`` call each.
        Built-in subclasses override it with one fused call over the whole list."""
        for averaged_param, source_param in zip(averaged, sources, strict=True):
            self.avg_func(averaged_param, source_param, steps)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged model."""
        return self.module(*args, **kwargs)

    @torch.no_grad()
    def update_parameters(self, model: nn.Module) -> None:
        """Fold ``model``'s current weights into the average (see the class docstring)."""
        source = (
            model.state_dict(keep_vars=True)
            if self.update_buffers
            else dict(model.named_parameters())
        )
        targets = self._targets()
        try:
            sources = [source[name] for name in targets.tensors]
        except KeyError:
            _raise_missing(targets.tensors, source, model)
        steps = self._host_steps
        if steps == 0:
            for own, new in zip(targets.all, sources, strict=True):
                own.copy_(new)
        else:
            if steps % self.interval == 0:
                averaged = [targets.all[i] for i in targets.floats]
                moved = [sources[i].to(targets.all[i].device) for i in targets.floats]
                self.average(averaged, moved, steps)
            # Counters (BatchNorm's num_batches_tracked) cannot be averaged: follow the model.
            for i in targets.counters:
                targets.all[i].copy_(sources[i])
        if not self.update_buffers:
            for name, buffer in model.named_buffers():
                own = targets.buffers.get(name)
                if own is not None:
                    own.copy_(buffer)
        self.steps += 1
        self._host_steps += 1


class _Targets:
    """The averaged copy's tensors, looked up once: all of them by name, which are floating
    point (averaged) and which are counters (copied), and its buffers by name."""

    def __init__(self, module: nn.Module, update_buffers: bool) -> None:
        self.owner = module
        self.tensors: dict[str, Tensor] = (
            module.state_dict(keep_vars=True) if update_buffers else dict(module.named_parameters())
        )
        self.all = list(self.tensors.values())
        self.floats = [i for i, t in enumerate(self.all) if t.dtype.is_floating_point]
        self.counters = [i for i, t in enumerate(self.all) if not t.dtype.is_floating_point]
        self.buffers = dict(module.named_buffers())


def _after_load(module: nn.Module, incompatible_keys: Any) -> None:
    # Loading happens once, outside the training step: reading the device counter is fine here.
    if isinstance(module, BaseAveragedModel):
        module._host_steps = int(module.steps)
        module.__dict__.pop("_targets_cache", None)


def _raise_missing(
    targets: dict[str, Tensor], source: dict[str, Tensor], model: nn.Module
) -> NoReturn:
    missing = [name for name in targets if name not in source]
    hint = close_matches(missing[0], source)
    near = f"; the model has {' or '.join(repr(h) for h in hint)}" if hint else ""
    wrapped = (
        " (pass the model itself, not its DDP/wrapper: its names start with 'module.')"
        if any(name.startswith("module.") for name in source)
        else ""
    )
    raise KeyError(
        f"update_parameters: {type(model).__name__} has no {missing[0]!r} "
        f"({len(missing)} averaged tensor(s) missing){near}{wrapped}"
    )
