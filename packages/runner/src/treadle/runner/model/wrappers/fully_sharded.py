"""MMFullyShardedDataParallel: torch's FullyShardedDataParallel with the model's steps and
arguments that a config file can hold (names instead of enums, functions and dtypes)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

import torch
import torch.nn as nn
from torch.distributed.fsdp import (
    BackwardPrefetch,
    CPUOffload,
    FullyShardedDataParallel,
    MixedPrecision,
    ShardingStrategy,
)

from treadle.registry.suggestions import close_matches, missing_type_message
from treadle.runner.registry import FUNCTIONS, MODEL_WRAPPERS

from ..base_model import OptimWrapperLike, run_forward


def _enum_member(argument: str, value: Any, enum_type: type[enum.Enum]) -> Any:
    if value is None or isinstance(value, enum_type):
        return value
    if isinstance(value, str):
        try:
            return enum_type[value]
        except KeyError:
            names = list(enum_type.__members__)
            close = close_matches(value, names)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise ValueError(
                f"MMFullyShardedDataParallel: {argument}={value!r} is not one of "
                f"{', '.join(names)}{hint}"
            ) from None
    raise TypeError(
        f"MMFullyShardedDataParallel: {argument} must be None, a name or a {enum_type.__name__}, "
        f"got {type(value).__name__}: {value!r}"
    )


def _function(argument: str, value: Any) -> Callable | None:
    """A callable from a name in FUNCTIONS (or an import path), a dict ``type=`` plus keyword
    arguments to bind, or a callable."""
    kwargs: dict[str, Any] = {}
    if isinstance(value, Mapping):
        kwargs = dict(value)
        if "type" not in kwargs:
            raise KeyError(
                f"MMFullyShardedDataParallel: the {argument} dict needs a 'type' (a function "
                f"registered in FUNCTIONS or its import path), got keys {sorted(kwargs)}"
            )
        value = kwargs.pop("type")
    if isinstance(value, str):
        with FUNCTIONS.switch_scope_and_registry(None) as registry:
            found = registry.get(value)
            if found is None:
                raise KeyError(f"{argument}: {missing_type_message(registry, value)}")
        value = found
    if value is None and not kwargs:
        return None
    if not callable(value):
        raise TypeError(
            f"MMFullyShardedDataParallel: {argument} must be None, a name, a dict with 'type' or "
            f"a callable, got {type(value).__name__}: {value!r}"
        )
    return partial(value, **kwargs) if kwargs else value


def _dtype(field: str, value: Any) -> torch.dtype | None:
    if value is None or isinstance(value, torch.dtype):
        return value
    if isinstance(value, str):
        found = getattr(torch, value, None)
        if isinstance(found, torch.dtype):
            return found
    raise ValueError(
        f"MMFullyShardedDataParallel: mixed_precision[{field!r}] must be a torch dtype or its "
        f"name ('float16', 'bfloat16', 'float32'), got {value!r}"
    )


def _mixed_precision(value: Any) -> MixedPrecision | None:
    if value is None or isinstance(value, MixedPrecision):
        return value
    if isinstance(value, Mapping):
        settings = dict(value)
        for field in ("param_dtype", "reduce_dtype", "buffer_dtype"):
            settings[field] = _dtype(field, settings.get(field))
        return MixedPrecision(**settings)
    raise TypeError(
        f"MMFullyShardedDataParallel: mixed_precision must be None, a dict or a MixedPrecision, "
        f"got {type(value).__name__}: {value!r}"
    )


def _cpu_offload(value: Any) -> CPUOffload | None:
    if isinstance(value, bool):
        return CPUOffload(offload_params=value)
    if value is None or isinstance(value, CPUOffload):
        return value
    raise TypeError(
        f"MMFullyShardedDataParallel: cpu_offload must be None, a bool or a CPUOffload, got "
        f"{type(value).__name__}: {value!r}"
    )


def _by_name(what: str, names: Iterable[Any], found: Mapping[str, Any]) -> list[Any]:
    """Parameters or modules named in ``names`` (objects pass through)."""
    picked = []
    for name in names:
        if not isinstance(name, str):
            picked.append(name)
            continue
        if name not in found:
            close = close_matches(name, found)
            hint = f"; did you mean {' or '.join(map(repr, close))}?" if close else ""
            raise KeyError(f"MMFullyShardedDataParallel: the model has no {what} {name!r}{hint}")
        picked.append(found[name])
    return picked


@MODEL_WRAPPERS.register_module()
class MMFullyShardedDataParallel(FullyShardedDataParallel):
    """FullyShardedDataParallel (FSDP1) that the runner's loops drive through ``train_step``,
    ``val_step`` and ``test_step``, built from plain config values.

    Args:
        module: the model to shard (a BaseModel for the steps).
        process_group: the group to shard over (the default group when None).
        sharding_strategy: a ShardingStrategy or its name ('FULL_SHARD', 'SHARD_GRAD_OP'...).
        cpu_offload: True offloads parameters (and gradients) to the CPU.
        auto_wrap_policy: a callable, a name in FUNCTIONS or an import path, or a dict
            ``type=`` plus keyword arguments bound to it.
        backward_prefetch: a BackwardPrefetch or its name ('BACKWARD_PRE', 'BACKWARD_POST').
        mixed_precision: a MixedPrecision or a dict of its fields, dtypes by name.
        param_init_fn: like ``auto_wrap_policy``.
        use_orig_params: keep the original parameters visible (True, unlike torch's default),
            so optimizers and parameter-wise settings see the names they were written for.
        **kwargs: FSDP's other arguments; ``ignored_modules`` and ``ignored_parameters`` may
            hold names (``ignored_parameters`` becomes FSDP's ``ignored_states``).

    Example:
        >>> model = MMFullyShardedDataParallel(  # doctest: +SKIP
        ...     MyModel(), sharding_strategy='SHARD_GRAD_OP',
        ...     mixed_precision=dict(param_dtype='bfloat16'))
        >>> log_vars = model.train_step(data_batch, optim_wrapper)  # doctest: +SKIP
    """

    def __init__(
        self,
        module: nn.Module,
        process_group: Any = None,
        sharding_strategy: str | ShardingStrategy | None = None,
        cpu_offload: bool | CPUOffload | None = None,
        auto_wrap_policy: str | Mapping | Callable | None = None,
        backward_prefetch: str | BackwardPrefetch | None = None,
        mixed_precision: Mapping | MixedPrecision | None = None,
        param_init_fn: str | Mapping | Callable[[nn.Module], None] | None = None,
        use_orig_params: bool = True,
        **kwargs: Any,
    ) -> None:
        if "ignored_parameters" in kwargs:
            names = kwargs.pop("ignored_parameters")
            if names is not None:
                kwargs["ignored_states"] = _by_name(
                    "parameter", names, dict(module.named_parameters())
                )
        if kwargs.get("ignored_modules") is not None:
            kwargs["ignored_modules"] = _by_name(
                "submodule", kwargs["ignored_modules"], dict(module.named_modules())
            )
        super().__init__(
            module=module,
            process_group=process_group,
            sharding_strategy=_enum_member(
                "sharding_strategy", sharding_strategy, ShardingStrategy
            ),
            cpu_offload=_cpu_offload(cpu_offload),
            auto_wrap_policy=_function("auto_wrap_policy", auto_wrap_policy),
            backward_prefetch=_enum_member(
                "backward_prefetch", backward_prefetch, BackwardPrefetch
            ),
            mixed_precision=_mixed_precision(mixed_precision),
            param_init_fn=_function("param_init_fn", param_init_fn),
            use_orig_params=use_orig_params,
            **kwargs,
        )

    def train_step(self, data: Any, optim_wrapper: OptimWrapperLike) -> dict[str, torch.Tensor]:
        """One training iteration; forward goes through FSDP, which gathers the shards."""
        with optim_wrapper.optim_context(self):
            data = self.module.data_preprocessor(data, training=True)
            losses = self._run_forward(data, mode="loss")
        parsed_loss, log_vars = self.module.parse_losses(losses)
        optim_wrapper.update_params(parsed_loss)
        return log_vars

    def val_step(self, data: Any) -> list:
        """Predictions, with forward through FSDP (the wrapped model's own ``val_step`` would
        run its forward on sharded parameters)."""
        data = self.module.data_preprocessor(data, False)
        return self._run_forward(data, mode="predict")

    def test_step(self, data: Any) -> list:
        """Predictions on a test batch; the same as :meth:`val_step`."""
        data = self.module.data_preprocessor(data, False)
        return self._run_forward(data, mode="predict")

    def _run_forward(self, data: Any, mode: str) -> Any:
        return run_forward(self, data, mode)
