"""FSDPStrategy: the model sharded across the processes with FSDP2, its checkpoints sharded with
torch.distributed.checkpoint (``state_dict_cfg='local'``) or gathered into one file on rank 0
(``'full'``)."""

from __future__ import annotations

import inspect
import logging
import re
from collections.abc import Iterator, Mapping
from typing import Any

import torch
from torch import nn

from treadle import dist
from treadle.logging import print_log
from treadle.runner.device import get_device
from treadle.runner.registry import MODEL_WRAPPERS, STRATEGIES

from .base import DEFAULT_REVISE_KEYS, BaseStrategy, unwrap_model
from .checkpoint_io import CheckpointIO, ShardedCheckpointIO
from .fsdp_optim_keys import rekey_optimizer_state

_STATE_DICT_TYPES = {
    "LOCAL_STATE_DICT": "local",
    "SHARDED_STATE_DICT": "local",
    "FULL_STATE_DICT": "full",
}


def _state_dict_kind(state_dict_cfg: Any) -> str:
    """'local' (sharded) or 'full' from MMEngine's ``state_dict_cfg``."""
    if isinstance(state_dict_cfg, str):
        if state_dict_cfg not in ("local", "full"):
            raise ValueError(
                f"FSDPStrategy: state_dict_cfg must be 'local' (sharded checkpoints, one file per "
                f"rank) or 'full' (one file from rank 0), or a dict, got {state_dict_cfg!r}"
            )
        return state_dict_cfg
    if isinstance(state_dict_cfg, Mapping):
        kind = state_dict_cfg.get("state_dict_type", "LOCAL_STATE_DICT")
        name = getattr(kind, "name", kind)
        if name not in _STATE_DICT_TYPES:
            raise ValueError(
                f"FSDPStrategy: state_dict_cfg['state_dict_type'] must be one of "
                f"{', '.join(_STATE_DICT_TYPES)}, got {kind!r}"
            )
        return _STATE_DICT_TYPES[name]
    raise TypeError(
        f"FSDPStrategy: state_dict_cfg must be 'local', 'full' or a dict, got "
        f"{type(state_dict_cfg).__name__}: {state_dict_cfg!r}"
    )


def _has_dtensor(value: Any) -> bool:
    from torch.distributed.tensor import DTensor

    if isinstance(value, DTensor):
        return True
    if isinstance(value, Mapping):
        return any(_has_dtensor(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_dtensor(item) for item in value)
    return False


def _wrappers(optim_wrapper: Any) -> Iterator[tuple[str | None, Any]]:
    inner = getattr(optim_wrapper, "optim_wrappers", None)
    if isinstance(inner, Mapping):
        yield from inner.items()
    else:
        yield None, optim_wrapper


@STRATEGIES.register_module()
class FSDPStrategy(BaseStrategy):
    """Train with the model sharded by FSDP2 (``torch.distributed.fsdp.fully_shard``) over
    all processes, with MMEngine's arguments.

    Args:
        model_wrapper: the wrapper's config; default ``dict(type='MMFullyShardedDataParallel')``,
            whose arguments (``sharding_strategy``, ``cpu_offload``, ``mixed_precision``,
            ``auto_wrap_policy``...) it may hold.
        skip_init_weights: build a model given as a config on the meta device and allocate its
            weights only once sharded, without initializing them (load a checkpoint next).
        state_dict_cfg: 'local' (default): checkpoints are directories written by every rank
            with torch.distributed.checkpoint, loadable under any world size; 'full': one file
            written by rank 0 with the gathered weights, like DDP's. MMEngine's dict form
            (``state_dict_type='FULL_STATE_DICT'``...) is accepted.
        activation_checkpointing: submodules whose activations are recomputed in backward
            (names, or a dict of ``modules`` / ``module_classes`` / ``check_fn``), applied
            before sharding.
        sync_bn: 'torch' to turn BatchNorm layers into SyncBatchNorm.
        **kwargs: BaseStrategy's (``dist_cfg``, ``work_dir``...).

    Example:
        >>> runner = FlexibleRunner(model=model, strategy=dict(
        ...     type='FSDPStrategy', state_dict_cfg='local',
        ...     model_wrapper=dict(auto_wrap_policy=['Block'], sharding_strategy='FULL_SHARD')),
        ...     ...)  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        model_wrapper: dict | None = None,
        skip_init_weights: bool = False,
        state_dict_cfg: str | dict = "local",
        activation_checkpointing: Any = None,
        sync_bn: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        if model_wrapper is not None and not isinstance(model_wrapper, Mapping):
            raise TypeError(
                "FSDPStrategy: model_wrapper must be a dict (type and arguments of a model "
                f"wrapper) or None, got {type(model_wrapper).__name__}"
            )
        if not isinstance(skip_init_weights, bool):
            raise TypeError(
                f"FSDPStrategy: skip_init_weights must be a bool, got {skip_init_weights!r}"
            )
        self.model_wrapper = dict(model_wrapper) if model_wrapper is not None else None
        self.skip_init_weights = skip_init_weights
        self.state_dict_cfg = state_dict_cfg
        self.state_dict_kind = _state_dict_kind(state_dict_cfg)
        self.activation_checkpointing = activation_checkpointing
        self.sync_bn = sync_bn
        self.checkpoint_io = (
            ShardedCheckpointIO() if self.state_dict_kind == "local" else CheckpointIO()
        )

    # -- model and optimizer ------------------------------------------------------------
    def prepare(self, model: nn.Module | dict, *, optim_wrapper: Any = None, **kwargs: Any) -> Any:
        """BaseStrategy's ``prepare``; a model config is built on the meta device with
        ``skip_init_weights``, an AmpOptimWrapper config gets FSDP's sharded grad scaler, and a
        built optimizer is rebuilt over the sharded parameters."""
        if isinstance(model, Mapping) and self.skip_init_weights:
            from treadle.runner.registry import MODELS

            with torch.device("meta"):
                model = MODELS.build(dict(model))
        if isinstance(optim_wrapper, Mapping):
            optim_wrapper = self.adjust_optim_wrapper_cfg(optim_wrapper)
        names = None
        if optim_wrapper is not None and not isinstance(optim_wrapper, Mapping):
            names = {id(p): n for n, p in unwrap_model(model).named_parameters()}
        result = super().prepare(model, optim_wrapper=optim_wrapper, **kwargs)
        if names is not None:
            for _, wrapper in _wrappers(self.optim_wrapper):
                self._rebind_optimizer(wrapper, names)
        return result

    def adjust_optim_wrapper_cfg(self, cfg: Mapping[str, Any]) -> dict:
        """An optimizer wrapper config as FSDP needs it: AmpOptimWrapper takes the sharded
        grad scaler (``use_fsdp=True``), whose inf checks span the ranks."""
        cfg = dict(cfg)
        if cfg.get("type", "OptimWrapper") in ("AmpOptimWrapper",):
            cfg.setdefault("use_fsdp", True)
        return cfg

    def _rebind_optimizer(self, wrapper: Any, names: dict[int, str]) -> None:
        """Build ``wrapper``'s optimizer again over the sharded parameters (FSDP2 replaced
        them), keeping its groups and settings."""
        optimizer = wrapper.optimizer
        current = dict(unwrap_model(self.model).named_parameters())
        if all(
            p is current.get(names.get(id(p), ""))
            for g in optimizer.param_groups
            for p in g["params"]
        ):
            return
        if optimizer.state:
            raise RuntimeError(
                "FSDPStrategy.prepare: the optimizer was built and has stepped before the model "
                "was sharded; give prepare the optimizer wrapper's config, or a wrapper that "
                "has not stepped yet"
            )
        groups = []
        for group in optimizer.param_groups:
            params = []
            for param in group["params"]:
                name = names.get(id(param))
                if name not in current:
                    raise RuntimeError(
                        f"FSDPStrategy.prepare: the optimizer holds a parameter that is not the "
                        f"model's ({name or 'unnamed'}); build it from the model's parameters"
                    )
                params.append(current[name])
            groups.append({**group, "params": params})
        # Some defaults are set by the class itself (AdamW's decoupled_weight_decay).
        accepted = inspect.signature(type(optimizer)).parameters
        defaults = {k: v for k, v in optimizer.defaults.items() if k in accepted}
        wrapper.optimizer = type(optimizer)(groups, **defaults)

    def wrap_model(self, model: nn.Module) -> nn.Module:
        """Activation checkpointing, then ``fully_shard`` through ``model_wrapper``."""
        if MODEL_WRAPPERS.get("MMFullyShardedDataParallel") is None:
            from treadle.runner.model.wrappers import fully_sharded  # noqa: F401 (registers)
        from treadle.runner.model.wrappers.fully_sharded import MMFullyShardedDataParallel

        if isinstance(model, MMFullyShardedDataParallel):
            return model
        if self.sync_bn is not None and dist.is_distributed():
            from treadle.runner.model import convert_sync_batchnorm

            model = convert_sync_batchnorm(model, self.sync_bn)
        on_meta = any(p.is_meta for p in model.parameters())
        if not on_meta:
            model = model.to(get_device())
        if self.activation_checkpointing is not None:
            self.apply_activation_checkpointing(model, self.activation_checkpointing)
        cfg = dict(self.model_wrapper or {})
        cfg.setdefault("type", "MMFullyShardedDataParallel")
        if self.skip_init_weights:
            cfg.setdefault("param_init_fn", _leave_uninitialized)
        return MODEL_WRAPPERS.build(cfg, default_args={"module": model})

    # -- states ---------------------------------------------------------------------------
    def _options(self, full: bool, strict: bool = True) -> Any:
        from torch.distributed.checkpoint.state_dict import StateDictOptions

        return StateDictOptions(full_state_dict=full, cpu_offload=full, strict=strict)

    def _inner(self) -> nn.Module:
        if self.model is None:
            raise RuntimeError("FSDPStrategy needs a prepared model: call prepare first")
        return unwrap_model(self.model)

    def model_state_dict(self) -> dict:
        """Sharded (DTensor) weights with 'local'; with 'full' the whole weights on rank 0 (on
        the CPU) and an empty dict elsewhere. A collective: every rank calls it."""
        from torch.distributed.checkpoint.state_dict import get_model_state_dict

        full = self.state_dict_kind == "full"
        return get_model_state_dict(self._inner(), options=self._options(full))

    def _optim_states(self, full: bool) -> dict:
        from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

        wrapper = self._require_optim_wrapper("save_checkpoint(save_optimizer=True)")
        states: dict[str, Any] = {}
        for name, single in _wrappers(wrapper):
            state = dict(single.state_dict())
            state.update(
                get_optimizer_state_dict(
                    self._inner(), single.optimizer, options=self._options(full)
                )
            )
            if name is None:
                return state
            states[name] = state
        return states

    def optim_state_dict(self) -> dict:
        """The optimizer wrapper's state with parameters named (not numbered), sharded with
        'local', whole on rank 0 with 'full'. A collective."""
        return self._optim_states(self.state_dict_kind == "full")

    def checkpoint_template(self) -> dict:
        template: dict[str, Any] = {}
        if self.model is not None:
            from torch.distributed.checkpoint.state_dict import get_model_state_dict

            template["state_dict"] = get_model_state_dict(self._inner())
        if callable(getattr(self.optim_wrapper, "state_dict", None)):
            template["optimizer"] = self._optim_states(full=False)
        return template

    def _check_fit(self, state_dict: Mapping[str, Any], strict: bool) -> None:
        """Missing and unexpected names (an error with ``strict``, else a warning) and shapes
        that differ (always an error), listed by name."""
        from torch.distributed.checkpoint.state_dict import get_model_state_dict

        expected = get_model_state_dict(self._inner())
        missing = [key for key in expected if key not in state_dict]
        unexpected = [key for key in state_dict if key not in expected]
        wrong = [
            f"{key} (checkpoint {list(value.shape)}, model {list(expected[key].shape)})"
            for key, value in state_dict.items()
            if key in expected
            and isinstance(value, torch.Tensor)
            and tuple(value.shape) != tuple(expected[key].shape)
        ]
        if wrong:
            raise RuntimeError(
                f"the checkpoint's weights do not fit the sharded model: size mismatch for "
                f"{', '.join(wrong)}"
            )
        if not (missing or unexpected):
            return
        parts = []
        if missing:
            parts.append(f"missing keys in source state_dict: {', '.join(missing)}")
        if unexpected:
            parts.append(f"unexpected key in source state_dict: {', '.join(unexpected)}")
        if strict:
            raise RuntimeError(
                "the checkpoint's weights do not match the model: " + "; ".join(parts)
            )
        print_log("; ".join(parts), logger="current", level=logging.WARNING)

    def load_model_state_dict(
        self,
        state_dict: dict,
        *,
        strict: bool = False,
        revise_keys: list = DEFAULT_REVISE_KEYS,
    ) -> None:
        """Load sharded weights (from a sharded checkpoint) or whole ones (a file from DDP, one
        process, or 'full') into the sharded model; ``revise_keys`` renames keys first."""
        from torch.distributed.checkpoint.state_dict import set_model_state_dict

        state_dict = dict(state_dict)
        for pattern, replacement in revise_keys or ():
            state_dict = {re.sub(pattern, replacement, key): v for key, v in state_dict.items()}
        self._check_fit(state_dict, strict)
        full = not _has_dtensor(state_dict)
        set_model_state_dict(self._inner(), state_dict, options=self._options(full, strict=False))

    def load_optim_state_dict(self, state_dict: dict) -> None:
        """Load optimizer states keyed by name (FSDP's) or by index (DDP's, one process's),
        sharded or whole, with the wrapper's other state (grad scaler)."""
        from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

        wrapper = self._require_optim_wrapper("load_optim_state_dict")
        like = self._optim_states(full=False)
        state_dict = rekey_optimizer_state(state_dict, like)
        for name, single in _wrappers(wrapper):
            state = dict(state_dict if name is None else state_dict[name])
            optimizer_state = {key: state.pop(key) for key in ("state", "param_groups")}
            set_optimizer_state_dict(
                self._inner(),
                single.optimizer,
                optimizer_state,
                options=self._options(not _has_dtensor(optimizer_state), strict=False),
            )
            if state:  # the wrapper's own entries (loss_scaler...)
                single.load_state_dict({**single.optimizer.state_dict(), **state})


def _leave_uninitialized(module: nn.Module) -> None:
    """``skip_init_weights``: the memory is allocated, the weights come from a checkpoint."""
