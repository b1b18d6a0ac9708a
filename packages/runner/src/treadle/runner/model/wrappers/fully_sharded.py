"""MMFullyShardedDataParallel: a model sharded with FSDP2 (``torch.distributed.fsdp.fully_shard``),
configured with MMEngine's FSDP arguments as a config file writes them (names instead of enums,
functions and dtypes), with the train, val and test steps the runner's loops call.

FSDP2 shards a module in place (its parameters become DTensors, its class gains FSDP's hooks), so
the wrapper is a thin container: ``wrapper.module`` is the user's model, with the same parameter
names as before sharding, and a checkpoint of it loads into an unsharded model.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from typing import Any

import torch
import torch.nn as nn
from torch.distributed.fsdp import (
    BackwardPrefetch,
    CPUOffload,
    CPUOffloadPolicy,
    FSDPModule,
    MixedPrecision,
    MixedPrecisionPolicy,
    OffloadPolicy,
    ShardingStrategy,
    fully_shard,
)

from treadle import dist
from treadle.registry.suggestions import close_matches, missing_type_message
from treadle.runner.device import get_device
from treadle.runner.registry import FUNCTIONS, MODEL_WRAPPERS

from ..base_model import OptimWrapperLike, run_forward
from .fsdp_wrap_policy import units_to_shard

# FSDP1 arguments that FSDP2 does without: accepted so that MMEngine configs run unchanged.
_FSDP1_ONLY = ("device_id", "limit_all_gathers", "forward_prefetch", "use_orig_params")
# torch's FSDP1 auto-wrap policies, which a config may name without their module path.
_TORCH_POLICIES = (
    "size_based_auto_wrap_policy",
    "transformer_auto_wrap_policy",
    "lambda_auto_wrap_policy",
    "ModuleWrapPolicy",
)


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


def _lookup_function(argument: str, name: str) -> Callable:
    with FUNCTIONS.switch_scope_and_registry(None) as registry:
        found = registry.get(name)
        if found is None and name in _TORCH_POLICIES:
            from torch.distributed.fsdp import wrap

            found = getattr(wrap, name)
        if found is None:
            raise KeyError(f"{argument}: {missing_type_message(registry, name)}")
    return found


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
        value = _lookup_function(argument, value)
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


_POLICY_FIELDS = ("param_dtype", "reduce_dtype", "output_dtype", "cast_forward_inputs")


def _mixed_precision(value: Any) -> tuple[MixedPrecisionPolicy, torch.dtype | None]:
    """FSDP2's policy and the dtype for buffers (FSDP2 leaves buffers alone: we cast them)."""
    if value is None:
        return MixedPrecisionPolicy(), None
    if isinstance(value, MixedPrecisionPolicy):
        return value, None
    if isinstance(value, MixedPrecision):
        value = {
            "param_dtype": value.param_dtype,
            "reduce_dtype": value.reduce_dtype,
            "buffer_dtype": value.buffer_dtype,
            "cast_forward_inputs": value.cast_forward_inputs,
        }
    if not isinstance(value, Mapping):
        raise TypeError(
            "MMFullyShardedDataParallel: mixed_precision must be None, a dict or a "
            f"MixedPrecision, got {type(value).__name__}: {value!r}"
        )
    settings = dict(value)
    buffer_dtype = _dtype("buffer_dtype", settings.pop("buffer_dtype", None))
    for field in (
        "keep_low_precision_grads",
        "cast_root_forward_inputs",
        "_module_classes_to_ignore",
    ):
        settings.pop(field, None)  # FSDP1 fields without an FSDP2 counterpart
    unknown = sorted(set(settings) - set(_POLICY_FIELDS))
    if unknown:
        raise KeyError(
            f"MMFullyShardedDataParallel: mixed_precision has no field {', '.join(unknown)}; it "
            f"takes {', '.join((*_POLICY_FIELDS, 'buffer_dtype'))}"
        )
    for field in ("param_dtype", "reduce_dtype", "output_dtype"):
        settings[field] = _dtype(field, settings.get(field))
    return MixedPrecisionPolicy(**settings), buffer_dtype


def _offload(value: Any) -> OffloadPolicy:
    if isinstance(value, OffloadPolicy):
        return value
    if isinstance(value, CPUOffload):
        value = value.offload_params
    if value is None or value is False:
        return OffloadPolicy()
    if value is True:
        # Pinned memory needs an accelerator; on a CPU-only machine it is plain memory.
        return CPUOffloadPolicy(pin_memory=torch.cuda.is_available())
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


def _mesh(sharding: ShardingStrategy, mesh: Any, process_group: Any) -> tuple[Any, bool]:
    """The device mesh and ``reshard_after_forward`` that play FSDP1's sharding strategy."""
    from torch.distributed.device_mesh import DeviceMesh, init_device_mesh

    reshard = sharding in (ShardingStrategy.FULL_SHARD, ShardingStrategy.HYBRID_SHARD)
    if mesh is not None:
        return mesh, reshard
    device_type = torch.device(get_device()).type
    if process_group is not None:
        return DeviceMesh.from_group(process_group, device_type), reshard
    world = dist.get_world_size()
    if sharding in (ShardingStrategy.FULL_SHARD, ShardingStrategy.SHARD_GRAD_OP):
        return init_device_mesh(device_type, (world,)), reshard
    # The other strategies replicate across one mesh dimension and shard across the other:
    # NO_SHARD shards over one process (DDP-like), HYBRID shards within a machine.
    shard = 1 if sharding is ShardingStrategy.NO_SHARD else dist.get_local_size()
    if world % shard:
        raise ValueError(
            f"MMFullyShardedDataParallel: sharding_strategy={sharding.name} shards within a "
            f"machine, but the world size {world} is not a multiple of the {shard} processes "
            "per machine"
        )
    return (
        init_device_mesh(
            device_type, (world // shard, shard), mesh_dim_names=("replicate", "shard")
        ),
        reshard,
    )


@MODEL_WRAPPERS.register_module()
class MMFullyShardedDataParallel(nn.Module):
    """A model sharded with FSDP2 across the processes of a group, driven by the runner's loops
    through ``train_step``, ``val_step`` and ``test_step``, built from plain config values.

    Args:
        module: the model to shard (a BaseModel for the steps); sharded in place.
        process_group: the group to shard over (the default group when None); or ``mesh``.
        sharding_strategy: a ShardingStrategy or its name: 'FULL_SHARD' (parameters gathered
            for forward and backward, resharded in between), 'SHARD_GRAD_OP' (kept gathered
            from forward to backward), 'NO_SHARD' (replicated, gradients all-reduced),
            'HYBRID_SHARD' / '_HYBRID_SHARD_ZERO2' (sharded within a machine, replicated
            across machines).
        cpu_offload: True keeps parameters, gradients and optimizer state on the CPU.
        auto_wrap_policy: which submodules become their own FSDP unit (gathered one at a time):
            an FSDP1 policy callable, its name or import path, a dict ``type=`` plus keyword
            arguments (``transformer_layer_cls`` / ``module_classes`` may hold class names of
            the model's modules), or a list of module class names.
        backward_prefetch: accepted for MMEngine configs (FSDP2 always prefetches the next
            unit in backward); the name is checked.
        mixed_precision: a dict of ``param_dtype``, ``reduce_dtype``, ``output_dtype``,
            ``buffer_dtype``, ``cast_forward_inputs`` (dtypes by name), an FSDP1
            MixedPrecision, or a MixedPrecisionPolicy.
        param_init_fn: for a model built on the meta device: called on each module after its
            memory is allocated (default: the module's ``reset_parameters``).
        ignored_modules, ignored_parameters: left unsharded (names or objects); the data
            preprocessor is always left out.
        sync_module_states: broadcast rank 0's parameters and buffers before sharding, so every
            rank starts from the same weights whatever its seed (DDP does the same).
        **kwargs: FSDP2's own ``reshard_after_forward``, ``mesh``, ``mp_policy``,
            ``offload_policy``, ``shard_placement_fn``; FSDP1's ``device_id``,
            ``limit_all_gathers``, ``forward_prefetch`` and ``use_orig_params`` are accepted
            and have nothing to do.

    Example:
        >>> model = MMFullyShardedDataParallel(  # doctest: +SKIP
        ...     MyModel(), sharding_strategy='SHARD_GRAD_OP',
        ...     auto_wrap_policy=['TransformerBlock'],
        ...     mixed_precision=dict(param_dtype='bfloat16'))
        >>> log_vars = model.train_step(data_batch, optim_wrapper)  # doctest: +SKIP
    """

    def __init__(
        self,
        module: nn.Module,
        process_group: Any = None,
        sharding_strategy: str | ShardingStrategy | None = None,
        cpu_offload: bool | CPUOffload | None = None,
        auto_wrap_policy: str | Mapping | Callable | list | None = None,
        backward_prefetch: str | BackwardPrefetch | None = None,
        mixed_precision: Mapping | MixedPrecision | MixedPrecisionPolicy | None = None,
        param_init_fn: str | Mapping | Callable[[nn.Module], None] | None = None,
        ignored_modules: Iterable[Any] | None = None,
        ignored_parameters: Iterable[Any] | None = None,
        sync_module_states: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        sharding = _enum_member("sharding_strategy", sharding_strategy, ShardingStrategy)
        _enum_member("backward_prefetch", backward_prefetch, BackwardPrefetch)
        offload = _offload(kwargs.pop("offload_policy", cpu_offload))
        mp_policy, buffer_dtype = _mixed_precision(kwargs.pop("mp_policy", mixed_precision))
        init_fn = _function("param_init_fn", param_init_fn)
        ignored = self._ignored(module, ignored_modules, ignored_parameters)
        policy = auto_wrap_policy
        if not (isinstance(policy, (list, tuple, set)) or policy is None):
            policy = _function("auto_wrap_policy", policy)
        for name in _FSDP1_ONLY:
            kwargs.pop(name, None)
        mesh = kwargs.pop("mesh", None)
        reshard = kwargs.pop("reshard_after_forward", None)
        placement = kwargs.pop("shard_placement_fn", None)
        if kwargs:
            raise TypeError(
                f"MMFullyShardedDataParallel: unexpected argument(s) {', '.join(sorted(kwargs))}; "
                "FSDP2 takes sharding_strategy, cpu_offload, auto_wrap_policy, mixed_precision, "
                "param_init_fn, ignored_modules, ignored_parameters, sync_module_states, "
                "reshard_after_forward, mesh, mp_policy, offload_policy, shard_placement_fn"
            )
        if not dist.is_distributed() and mesh is None and process_group is None:
            raise RuntimeError(
                "MMFullyShardedDataParallel shards across the processes of a process group, and "
                "there is none: launch with torchrun and launcher='pytorch' (or call "
                "treadle.dist.init_dist first)"
            )
        mesh, default_reshard = _mesh(sharding or ShardingStrategy.FULL_SHARD, mesh, process_group)
        reshard = default_reshard if reshard is None else reshard
        on_meta = any(p.is_meta for p in module.parameters())
        if sync_module_states and not on_meta and dist.get_world_size() > 1:
            self._broadcast_from_rank0(module)
        if buffer_dtype is not None:
            for buffer_owner in module.modules():
                for name, buffer in buffer_owner.named_buffers(recurse=False):
                    if buffer.is_floating_point():
                        setattr(buffer_owner, name, buffer.to(buffer_dtype))
        shard_args: dict[str, Any] = dict(
            mesh=mesh,
            reshard_after_forward=reshard,
            mp_policy=mp_policy,
            offload_policy=offload,
            ignored_params=ignored or None,
        )
        if placement is not None:
            shard_args["shard_placement_fn"] = placement
        self.fsdp_units = [*units_to_shard(module, policy, ignored), module]
        for unit in self.fsdp_units:
            fully_shard(unit, **shard_args)
        if on_meta:
            self._materialize(module, init_fn)
        self.module = module
        self.mesh = mesh
        self.mp_policy = mp_policy
        self.sharding_strategy = sharding or ShardingStrategy.FULL_SHARD

    @staticmethod
    def _ignored(
        module: nn.Module, modules: Iterable[Any] | None, parameters: Iterable[Any] | None
    ) -> set[nn.Parameter]:
        ignored: set[nn.Parameter] = set()
        named = dict(module.named_modules())
        for submodule in _by_name("submodule", modules or (), named):
            ignored.update(submodule.parameters())
        ignored.update(_by_name("parameter", parameters or (), dict(module.named_parameters())))
        preprocessor = getattr(module, "data_preprocessor", None)
        if isinstance(preprocessor, nn.Module):
            # The preprocessor runs outside forward (before it), where sharded weights are not
            # gathered; it is moved to the device instead.
            preprocessor.to(get_device())
            ignored.update(preprocessor.parameters())
        return ignored

    @staticmethod
    def _broadcast_from_rank0(module: nn.Module) -> None:
        device = torch.device(get_device())
        for tensor in [*module.parameters(), *module.buffers()]:
            on_device = tensor.data.to(device)
            torch.distributed.broadcast(on_device, src=0)
            tensor.data.copy_(on_device)

    @staticmethod
    def _materialize(module: nn.Module, init_fn: Callable | None) -> None:
        module.to_empty(device=get_device())
        for submodule in module.modules():
            if init_fn is not None:
                init_fn(submodule)
            elif callable(getattr(submodule, "reset_parameters", None)):
                submodule.reset_parameters()

    # -- FSDP1's helpers that MMEngine code calls -----------------------------------------
    @property
    def mixed_precision(self) -> MixedPrecisionPolicy:
        """The mixed precision policy (``param_dtype``, ``reduce_dtype``...)."""
        return self.mp_policy

    @staticmethod
    def fsdp_modules(module: nn.Module) -> list[nn.Module]:
        """The FSDP units inside ``module`` (itself included), outermost first."""
        return [m for m in module.modules() if isinstance(m, FSDPModule)]

    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(module: nn.Module, **kwargs: Any) -> Iterator[None]:
        """Inside the block every FSDP unit of ``module`` holds its whole parameters (read
        them; changes are not written back to the shards)."""
        units = MMFullyShardedDataParallel.fsdp_modules(module)
        for unit in units:
            unit.unshard()
        try:
            yield
        finally:
            for unit in units:
                unit.reshard()

    # -- what the loops call ------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside the block, backward keeps unsharded gradients locally (accumulation) and
        reduces them across ranks only on the first backward outside it."""
        self.module.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            self.module.set_requires_gradient_sync(True)

    def train_step(self, data: Any, optim_wrapper: OptimWrapperLike) -> dict[str, torch.Tensor]:
        """One training iteration: preprocess, forward (FSDP gathers each unit's shards), parse
        the losses, and update through the optimizer wrapper."""
        with optim_wrapper.optim_context(self):
            data = self.module.data_preprocessor(data, training=True)
            losses = run_forward(self.module, data, "loss")
        parsed_loss, log_vars = self.module.parse_losses(losses)
        optim_wrapper.update_params(parsed_loss)
        return log_vars

    def val_step(self, data: Any) -> list:
        """Predictions on a validation batch."""
        data = self.module.data_preprocessor(data, False)
        return run_forward(self.module, data, "predict")

    def test_step(self, data: Any) -> list:
        """Predictions on a test batch; the same as :meth:`val_step`."""
        return self.val_step(data)
