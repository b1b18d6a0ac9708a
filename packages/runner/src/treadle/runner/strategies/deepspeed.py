"""DeepSpeedStrategy: train through DeepSpeed's engine (ZeRO stages 0-3, fp16/bf16, offload).

Registering the class does not import deepspeed; building one does, and says which extra to
install when it is missing. The engine is built on first use (the first train step, or a
checkpoint read or written), once the Runner has built the optimizer wrapper and initialized
or loaded the weights, because DeepSpeed copies the weights into its own buffers when it starts.
"""

from __future__ import annotations

import contextlib
import copy
import os
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

from treadle.runner.checkpoint import weights_to_cpu
from treadle.runner.model import is_model_wrapper
from treadle.runner.model.wrappers.deepspeed import MMDeepSpeedEngineWrapper
from treadle.runner.optim.optimizer.deepspeed_optim_wrapper import DeepSpeedOptimWrapper
from treadle.runner.registry import OPTIMIZERS, STRATEGIES

from .base import DEFAULT_REVISE_KEYS, BaseStrategy
from .deepspeed_checkpoint_io import DEEPSPEED_CHECKPOINT_KEY, DeepSpeedCheckpointIO
from .deepspeed_config import (
    QUIET_STEPS_PER_PRINT,
    build_config,
    import_deepspeed,
    is_deepspeed_checkpointing,
    reconcile_batch_size,
)

# DeepSpeed's optimizers, registered in OPTIMIZERS by name when a strategy is built.
_DEEPSPEED_OPTIMIZERS = {
    "deepspeed.ops.adam": ("DeepSpeedCPUAdam", "FusedAdam"),
    "deepspeed.ops.lamb": ("FusedLamb",),
    "deepspeed.runtime.fp16.onebit": ("OnebitAdam", "OnebitLamb", "ZeroOneAdam"),
}


def register_deepspeed_optimizers() -> list[str]:
    """Register DeepSpeed's optimizers (FusedAdam, DeepSpeedCPUAdam...) in OPTIMIZERS; returns
    the names now registered. Nothing happens without deepspeed."""
    import importlib

    names = []
    for module_name, classes in _DEEPSPEED_OPTIMIZERS.items():
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name in classes:
            optimizer = getattr(module, name, None)
            if optimizer is None:
                continue
            if name not in OPTIMIZERS.module_dict:
                OPTIMIZERS.register_module(module=optimizer)
            names.append(name)
    return names


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@STRATEGIES.register_module()
class DeepSpeedStrategy(BaseStrategy):
    """Train with DeepSpeed: the model goes into a ``DeepSpeedEngine`` with the DeepSpeed
    config built from ``config`` and the keyword arguments (MMEngine 0.10's).

    The optimizer wrapper must be ``DeepSpeedOptimWrapper``. Batch sizes come from the train
    dataloader: ``train_micro_batch_size_per_gpu`` is its batch size and ``train_batch_size``
    that times the world size and ``gradient_accumulation_steps``; a config that says
    otherwise is an error naming the numbers.

    Args:
        config: DeepSpeed config, a dict or a path to its JSON file; the arguments below are
            set over it (https://www.deepspeed.ai/docs/config-json/).
        zero_optimization: ZeRO settings, e.g. ``dict(stage=2)``.
        gradient_clipping: max gradient norm.
        fp16: e.g. ``dict(enabled=True, loss_scale=0)``.
        inputs_to_half: positions or keys of the preprocessed data to cast to half precision
            (fp16 or bf16 runs).
        bf16: e.g. ``dict(enabled=True)``.
        amp: DeepSpeed's Apex AMP section.
        activation_checkpointing: DeepSpeed's section (``partition_activations``...), or
            treadle's choice of submodules to checkpoint (names, or ``dict(modules=...,
            module_classes=...)``), applied with non-reentrant ``torch.utils.checkpoint``.
        aio: DeepSpeed's asynchronous I/O section (NVMe offload).
        train_micro_batch_size_per_gpu: per-process batch; default the dataloader's.
        gradient_accumulation_steps: steps per optimizer update (default 1).
        steps_per_print: DeepSpeed's own log interval (default: never).
        exclude_frozen_parameters: leave parameters without gradients out of checkpoints.
        **kwargs: BaseStrategy's arguments (``dist_cfg``...).

    Example:
        >>> runner = FlexibleRunner(
        ...     model=dict(type='MyModel'), work_dir='work_dirs/ds',
        ...     strategy=dict(type='DeepSpeedStrategy', zero_optimization=dict(stage=2)),
        ...     optim_wrapper=dict(type='DeepSpeedOptimWrapper',
        ...                        optimizer=dict(type='AdamW', lr=1e-3)),
        ...     ...)  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        config: str | os.PathLike | dict | None = None,
        zero_optimization: dict | None = None,
        gradient_clipping: float | None = None,
        fp16: dict | None = None,
        inputs_to_half: list[int | str] | None = None,
        bf16: dict | None = None,
        amp: dict | None = None,
        activation_checkpointing: Any = None,
        aio: dict | None = None,
        train_micro_batch_size_per_gpu: int | None = None,
        gradient_accumulation_steps: int | None = None,
        steps_per_print: int = QUIET_STEPS_PER_PRINT,
        exclude_frozen_parameters: bool | None = None,
        **kwargs: Any,
    ) -> None:
        self._deepspeed = import_deepspeed()
        super().__init__(**kwargs)
        deepspeed_checkpointing = is_deepspeed_checkpointing(activation_checkpointing)
        self.activation_checkpointing = (
            None if deepspeed_checkpointing else activation_checkpointing
        )
        self.config = build_config(
            config,
            steps_per_print=steps_per_print,
            zero_optimization=zero_optimization,
            gradient_clipping=gradient_clipping,
            fp16=fp16,
            bf16=bf16,
            amp=amp,
            activation_checkpointing=activation_checkpointing if deepspeed_checkpointing else None,
            aio=aio,
            train_micro_batch_size_per_gpu=train_micro_batch_size_per_gpu,
            gradient_accumulation_steps=gradient_accumulation_steps,
        )
        self.inputs_to_half = inputs_to_half
        self.exclude_frozen_parameters = bool(exclude_frozen_parameters)
        self.checkpoint_io = DeepSpeedCheckpointIO(self)
        #: The config the engine was built with (batch sizes filled in); None until then.
        self.engine_config: dict | None = None
        self._engine: Any = None
        register_deepspeed_optimizers()

    # -- model and engine -------------------------------------------------------------------
    def wrap_model(self, model: nn.Module) -> nn.Module:
        """``model`` in an MMDeepSpeedEngineWrapper whose engine is built on first use."""
        if isinstance(model, MMDeepSpeedEngineWrapper):
            return model
        if is_model_wrapper(model):
            raise TypeError(
                f"DeepSpeedStrategy puts the model in DeepSpeed's engine itself: give it the "
                f"bare model, not one wrapped in {type(model).__name__}"
            )
        if self.activation_checkpointing is not None:
            self.apply_activation_checkpointing(model, self.activation_checkpointing)
        model = self.convert_model(model)
        wrapper = MMDeepSpeedEngineWrapper(
            module=model, inputs_to_half=self.inputs_to_half, build_engine=self._build_engine
        )
        self.model = wrapper
        return wrapper

    @property
    def engine(self) -> Any:
        """The DeepSpeed engine, built now if it was not yet."""
        if self._engine is None:
            wrapper = self.model
            if not isinstance(wrapper, MMDeepSpeedEngineWrapper):
                raise RuntimeError(
                    "DeepSpeedStrategy has no model to build its engine around: call prepare "
                    "(or wrap_model) first"
                )
            wrapper.ensure_engine(self.optim_wrapper)
        return self._engine

    def _build_engine(self, optim_wrapper: Any, batch_size: int | None = None) -> Any:
        if self._engine is not None:
            return self._engine
        if batch_size is not None:
            # The first train batch, when the Runner did not say the dataloader's batch size.
            self.dispatch_kwargs.setdefault("train_micro_batch_size_per_gpu", batch_size)
        optim_wrapper = optim_wrapper if optim_wrapper is not None else self.optim_wrapper
        if optim_wrapper is not None and not isinstance(optim_wrapper, DeepSpeedOptimWrapper):
            raise TypeError(
                "DeepSpeedStrategy trains with optim_wrapper=dict(type='DeepSpeedOptimWrapper', "
                f"optimizer=...), got {type(optim_wrapper).__name__}: DeepSpeed's engine does "
                "the backward, accumulation and step itself"
            )
        self._init_process_group()
        config = copy.deepcopy(self.config)
        reconcile_batch_size(
            config, self.dispatch_kwargs.get("train_micro_batch_size_per_gpu"), self.world_size
        )
        module = self.model.module
        kwargs: dict[str, Any] = {"model": module, "config": config}
        if optim_wrapper is not None:
            kwargs["optimizer"] = optim_wrapper.optimizer
        engine, *_ = self._deepspeed.initialize(**kwargs)
        if optim_wrapper is not None:
            optim_wrapper.model = engine
            self.optim_wrapper = optim_wrapper
        self.engine_config = config
        self._engine = engine
        return engine

    def _init_process_group(self) -> None:
        # DeepSpeed needs a process group even for one process: start a local one.
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            return
        from deepspeed.accelerator import get_accelerator

        backend = self.dist_cfg.get("backend") or get_accelerator().communication_backend_name()
        # DeepSpeed reads the launcher's variables even for one process.
        for name, value in (("RANK", "0"), ("LOCAL_RANK", "0"), ("WORLD_SIZE", "1")):
            os.environ.setdefault(name, value)
        torch.distributed.init_process_group(
            backend=backend,
            init_method=f"tcp://127.0.0.1:{_free_port()}",
            rank=0,
            world_size=1,
        )

    @contextlib.contextmanager
    def no_sync(self, model: nn.Module | None = None) -> Iterator[None]:
        """Nothing to do: the engine reduces gradients at accumulation boundaries itself."""
        yield

    # -- states -----------------------------------------------------------------------------
    def model_state_dict(self) -> dict:
        """The model's weights; under ZeRO-3 gathered onto rank 0 (a collective: every rank
        calls it; the others get an empty dict)."""
        if self._engine is None:
            return super().model_state_dict()
        engine = self._engine
        exclude = self.exclude_frozen_parameters
        if engine.zero_optimization_partition_weights():
            state_dict = engine._zero3_consolidated_16bit_state_dict(
                exclude_frozen_parameters=exclude
            )
            return dict(state_dict or {})
        return weights_to_cpu(engine.module_state_dict(exclude_frozen_parameters=exclude))

    def load_model_state_dict(
        self,
        state_dict: dict,
        *,
        strict: bool = False,
        revise_keys: list = DEFAULT_REVISE_KEYS,
    ) -> None:
        """Load weights into the model (and DeepSpeed's full-precision copies of them). The
        weights ``read_checkpoint`` took from a DeepSpeed directory are already loaded."""
        if state_dict is self.checkpoint_io.loaded_state_dict:
            self.checkpoint_io.loaded_state_dict = None
            return
        if self._engine is None:
            super().load_model_state_dict(state_dict, strict=strict, revise_keys=revise_keys)
            return
        engine = self._engine
        if engine.zero_optimization_partition_weights():
            params = list(engine.module.parameters())
            with self._deepspeed.zero.GatheredParameters(params, modifier_rank=0):
                if self.rank == 0:
                    super().load_model_state_dict(
                        state_dict, strict=strict, revise_keys=revise_keys
                    )
        else:
            super().load_model_state_dict(state_dict, strict=strict, revise_keys=revise_keys)
        refresh = getattr(engine.optimizer, "refresh_fp32_params", None)
        if callable(refresh):
            refresh()

    def optim_state_dict(self) -> dict:
        """The optimizer wrapper's own state; the optimizer's is in the engine's files."""
        return self._require_optim_wrapper("save_checkpoint(save_optimizer=True)").state_dict()

    def load_optim_state_dict(self, state_dict: dict) -> None:
        """Load the optimizer state of a DeepSpeed checkpoint directory (through the engine)
        and the wrapper's own state."""
        wrapper = self._require_optim_wrapper("load_optim_state_dict")
        state_dict = dict(state_dict)
        path = state_dict.pop(DEEPSPEED_CHECKPOINT_KEY, None)
        if path is None:
            foreign = [key for key in state_dict if key != "base_param_settings"]
            if foreign:
                raise ValueError(
                    "DeepSpeedStrategy resumes the optimizer only from a checkpoint directory "
                    "DeepSpeed wrote; this checkpoint's optimizer state (keys "
                    f"{', '.join(map(str, foreign))}) was written without DeepSpeed. Load its "
                    "weights with load_from (or resume with resume_optimizer=False)"
                )
        else:
            self.load_engine_checkpoint(path, load_optimizer_states=True)
        wrapper.load_state_dict(state_dict)

    def load_engine_checkpoint(self, path: str, *, load_optimizer_states: bool) -> dict:
        """``engine.load_checkpoint`` of the DeepSpeed directory ``path``: the weights and,
        with ``load_optimizer_states``, the optimizer state and the engine's step counters.
        Returns the client state saved with it."""
        engine = self.engine
        directory, tag = os.path.split(os.path.abspath(path))
        loaded_path, client_state = engine.load_checkpoint(
            directory,
            tag=tag,
            load_module_strict=not self.exclude_frozen_parameters,
            load_optimizer_states=load_optimizer_states,
            load_lr_scheduler_states=False,
        )
        if loaded_path is None:
            raise RuntimeError(f"DeepSpeed could not load the checkpoint directory {path}")
        return dict(client_state or {})

    def load_engine_weights(self, path: str) -> dict:
        """The weights of the DeepSpeed directory ``path`` into the model (and DeepSpeed's
        full-precision copies), leaving the optimizer state and the engine's step counters
        as they are; returns the client state saved with it.

        The directory may come from another ZeRO stage: ZeRO shards are consolidated into
        full-precision weights first (DeepSpeed's own weights-only load cannot cross stages,
        and under ZeRO-3 follows the directory's 'latest' file whatever tag it is given)."""
        engine = self.engine
        names = sorted(os.listdir(path))
        model_states = [name for name in names if name.endswith("model_states.pt")]
        if not model_states:
            raise RuntimeError(f"{path} has no DeepSpeed model states file (*model_states.pt)")
        client_state = engine.checkpoint_engine.load(
            os.path.join(path, model_states[0]), map_location="cpu"
        )
        if any(name.startswith("zero_pp_rank_") and "optim_states" in name for name in names):
            from deepspeed.utils.zero_to_fp32 import get_fp32_state_dict_from_zero_checkpoint

            directory, tag = os.path.split(os.path.abspath(path))
            state_dict = get_fp32_state_dict_from_zero_checkpoint(
                directory, tag=tag, exclude_frozen_parameters=self.exclude_frozen_parameters
            )
        else:
            state_dict = client_state["module"]
        self.load_model_state_dict(dict(state_dict), strict=not self.exclude_frozen_parameters)
        return dict(client_state)

    @property
    def checkpoint_on_every_rank(self) -> bool:
        # The engine writes a shard on every rank, and ZeRO-3 gathers weights collectively.
        return True
