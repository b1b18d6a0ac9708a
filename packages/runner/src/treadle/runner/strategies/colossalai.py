"""ColossalAIStrategy: train through ColossalAI's Booster and one of its plugins.

Registering the class does not import colossalai; building one does, and says which extra to
install when it is missing. The booster and its plugin are built, and the model and optimizer
boosted, on first use (the process group and the optimizer exist by then).
"""

from __future__ import annotations

import contextlib
import inspect
import os
from collections.abc import Iterator
from typing import Any

import torch
from torch import nn

from treadle.runner.checkpoint import weights_to_cpu
from treadle.runner.model import is_model_wrapper
from treadle.runner.optim.optimizer.colossalai_optim_wrapper import ColossalAIOptimWrapper
from treadle.runner.registry import MODEL_WRAPPERS, OPTIMIZERS, STRATEGIES

from .base import DEFAULT_REVISE_KEYS, BaseStrategy
from .colossalai_checkpoint_io import (
    COLOSSALAI_CHECKPOINT_KEY,
    OPTIMIZER_DIR,
    ColossalAICheckpointIO,
)
from .colossalai_config import (
    build_from_module,
    import_colossalai,
    mixed_precision_spec,
    plugin_spec,
)
from .colossalai_model_wrapper import ColossalAIModelWrapper


@contextlib.contextmanager
def _cpu_synchronize_allowed() -> Iterator[None]:
    """ColossalAI's CPU accelerator (0.5) raises in ``synchronize()``, which its optimizer
    loading calls; on the CPU there is nothing to wait for, so it does nothing inside."""
    from colossalai.accelerator import get_accelerator

    accelerator = get_accelerator()
    if accelerator.name != "cpu":
        yield
        return
    accelerator.synchronize = lambda *args, **kwargs: None
    try:
        yield
    finally:
        del accelerator.synchronize


def register_colossalai_optimizers() -> list[str]:
    """Register ColossalAI's optimizers (HybridAdam, CPUAdam, FusedAdam, Lamb...) in
    OPTIMIZERS under their names; returns them."""
    import colossalai.nn.optimizer as optimizers

    names = []
    for name, optimizer in inspect.getmembers(
        optimizers,
        lambda value: inspect.isclass(value) and issubclass(value, torch.optim.Optimizer),
    ):
        if name not in OPTIMIZERS.module_dict:
            OPTIMIZERS.register_module(name=name, module=optimizer)
        names.append(name)
    return names


@STRATEGIES.register_module()
class ColossalAIStrategy(BaseStrategy):
    """Train with ColossalAI (MMEngine 0.10's arguments).

    On a machine without GPUs only ``plugin='torch-ddp'`` (TorchDDPPlugin) runs: Gemini and
    LowLevelZero need CUDA or NPU.

    Args:
        config: kept for MMEngine's signature (ColossalAI's launch config; the Runner starts
            the process group itself).
        mixed_precision: 'fp16', 'fp16_apex', 'bf16', 'fp8', a dict with ``type`` (a class of
            ``colossalai.booster.mixed_precision``) or a built one.
        plugin: 'gemini' (MMEngine's default: bf16, placement 'auto'), 'lowlevel-zero',
            'torch-ddp', a dict with ``type`` (a class of ``colossalai.booster.plugin``) or a
            built plugin.
        model_wrapper: MODEL_WRAPPERS config of the wrapper around the boosted model (default
            ColossalAIModelWrapper).
        **kwargs: BaseStrategy's arguments.

    Example:
        >>> runner = FlexibleRunner(
        ...     model=dict(type='MyModel'), work_dir='work_dirs/colo',
        ...     strategy=dict(type='ColossalAIStrategy', plugin='torch-ddp'),
        ...     optim_wrapper=dict(type='ColossalAIOptimWrapper',
        ...                        optimizer=dict(type='AdamW', lr=1e-3)),
        ...     ...)  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        config: str | dict | None = None,
        mixed_precision: str | dict | Any = None,
        plugin: str | dict | Any = "gemini",
        model_wrapper: dict | None = None,
        **kwargs: Any,
    ) -> None:
        import_colossalai()
        super().__init__(**kwargs)
        # Checked now (a typo fails at construction); built when the group exists.
        if isinstance(plugin, (str, dict)):
            plugin_spec(plugin)
        if isinstance(mixed_precision, (str, dict)):
            mixed_precision_spec(mixed_precision)
        if model_wrapper is not None and not isinstance(model_wrapper, dict):
            raise TypeError(
                f"ColossalAIStrategy model_wrapper must be a MODEL_WRAPPERS config dict or None, "
                f"got {type(model_wrapper).__name__}: {model_wrapper!r}"
            )
        self.config = config or {}
        self.plugin = plugin
        self.mixed_precision = mixed_precision
        self.model_wrapper = dict(model_wrapper or {"type": "ColossalAIModelWrapper"})
        self.checkpoint_io = ColossalAICheckpointIO(self)
        self._booster: Any = None
        self._boosted: Any = None
        register_colossalai_optimizers()

    # -- booster ----------------------------------------------------------------------------
    @property
    def booster(self) -> Any:
        """ColossalAI's Booster with the plugin and mixed precision, built now if needed."""
        if self._booster is None:
            import colossalai.booster.mixed_precision as precisions
            import colossalai.booster.plugin as plugins
            from colossalai.booster import Booster

            plugin = self.plugin
            if isinstance(plugin, (str, dict)):
                plugin = build_from_module(plugins, plugin_spec(plugin), "plugin")
            precision = self.mixed_precision
            if isinstance(precision, (str, dict)):
                precision = build_from_module(
                    precisions, mixed_precision_spec(precision), "mixed precision"
                )
            self._booster = Booster(mixed_precision=precision, plugin=plugin)
        return self._booster

    @property
    def boosted_model(self) -> Any:
        """The model as the booster wrapped it, boosting it now if needed."""
        if self._boosted is None:
            wrapper = self.model
            if not isinstance(wrapper, ColossalAIModelWrapper):
                raise RuntimeError(
                    "ColossalAIStrategy has no model to boost: call prepare (or wrap_model) first"
                )
            wrapper.ensure_boosted(self.optim_wrapper)
        return self._boosted

    def wrap_model(self, model: nn.Module) -> nn.Module:
        """``model`` in the ``model_wrapper`` (ColossalAIModelWrapper), boosted on first use."""
        if isinstance(model, ColossalAIModelWrapper):
            return model
        if is_model_wrapper(model):
            raise TypeError(
                "ColossalAIStrategy boosts the model itself: give it the bare model, not one "
                f"wrapped in {type(model).__name__}"
            )
        model = self.convert_model(model)
        wrapper = MODEL_WRAPPERS.build(
            self.model_wrapper, default_args=dict(model=model, boost=self._boost)
        )
        self.model = wrapper
        return wrapper

    def _boost(self, optim_wrapper: Any) -> Any:
        if self._boosted is not None:
            return self._boosted
        optim_wrapper = optim_wrapper if optim_wrapper is not None else self.optim_wrapper
        if optim_wrapper is not None and not isinstance(optim_wrapper, ColossalAIOptimWrapper):
            raise TypeError(
                "ColossalAIStrategy trains with optim_wrapper=dict(type='ColossalAIOptimWrapper', "
                f"optimizer=...), got {type(optim_wrapper).__name__}"
            )
        module = self.model.module
        if optim_wrapper is None:
            boosted, *_ = self.booster.boost(module)
        else:
            boosted, optimizer, *_ = self.booster.boost(module, optim_wrapper.optimizer)
            optim_wrapper.optimizer = optimizer
            optim_wrapper.booster = self.booster
            self.optim_wrapper = optim_wrapper
        self._boosted = boosted
        return boosted

    # -- states -----------------------------------------------------------------------------
    def model_state_dict(self) -> dict:
        """The model's weights (through the booster's wrapper once boosted)."""
        if self._boosted is None:
            return super().model_state_dict()
        return weights_to_cpu(self._boosted.unwrap().state_dict())

    def load_model_state_dict(
        self,
        state_dict: dict,
        *,
        strict: bool = False,
        revise_keys: list = DEFAULT_REVISE_KEYS,
    ) -> None:
        """Load weights into the model; those ``read_checkpoint`` took from a ColossalAI
        directory are already loaded."""
        if state_dict is self.checkpoint_io.loaded_state_dict:
            self.checkpoint_io.loaded_state_dict = None
            return
        super().load_model_state_dict(state_dict, strict=strict, revise_keys=revise_keys)

    def optim_state_dict(self) -> dict:
        """The optimizer wrapper's own state (``base_param_settings``); the optimizer's goes
        to the checkpoint directory's ``optimizer/`` files."""
        wrapper = self._require_optim_wrapper("save_checkpoint(save_optimizer=True)")
        if wrapper.base_param_settings is None:
            return {}
        return {"base_param_settings": dict(wrapper.base_param_settings)}

    def load_optim_state_dict(self, state_dict: dict) -> None:
        """Load the optimizer state of a ColossalAI checkpoint directory through the booster
        (or, from another checkpoint, as an ordinary optimizer state)."""
        wrapper = self._require_optim_wrapper("load_optim_state_dict")
        state_dict = dict(state_dict)
        path = state_dict.pop(COLOSSALAI_CHECKPOINT_KEY, None)
        if path is None:
            wrapper.load_state_dict(state_dict)
            return
        self.boosted_model  # noqa: B018 - the optimizer must be boosted before loading
        with _cpu_synchronize_allowed():
            self.booster.load_optimizer(wrapper.optimizer, os.path.join(path, OPTIMIZER_DIR))
        settings = state_dict.get("base_param_settings")
        if settings is not None:
            wrapper.base_param_settings = dict(settings)

    @property
    def checkpoint_on_every_rank(self) -> bool:
        # The booster saves collectively (sharded plugins gather on every rank).
        return True
