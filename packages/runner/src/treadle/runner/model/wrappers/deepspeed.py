"""MMDeepSpeedEngineWrapper: the train, val and test steps of a model trained by DeepSpeed.

The wrapper is an ``nn.Module`` holding the user's model as ``module`` (so ``is_model_wrapper``,
``.module``, ``parameters()``, ``train()``/``eval()`` and the optimizer constructors see it as
for DDP), and the DeepSpeed engine around it as ``model`` (MMEngine's name). The engine can be
built late, on first use, by the strategy: DeepSpeed needs the optimizer when it starts, while
the Runner wraps the model before it builds the optimizer and initializes the weights. Importing
this module does not import deepspeed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

from treadle.runner.registry import MODEL_WRAPPERS


def _cast_floating(value: Any, dtype: torch.dtype) -> Any:
    # Only floating tensors: labels and indices keep their integer types.
    if isinstance(value, torch.Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    if isinstance(value, Mapping):
        return type(value)({key: _cast_floating(item, dtype) for key, item in value.items()})
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(_cast_floating(item, dtype) for item in value)
    return value


def batch_size_of(data: Any) -> int | None:
    """The number of samples in a dataloader batch (``dict(inputs=...)`` or a sequence whose
    first item holds the inputs), or None when it cannot tell."""
    inputs = data.get("inputs") if isinstance(data, Mapping) else None
    if inputs is None and isinstance(data, (list, tuple)) and data:
        inputs = data[0]
    if isinstance(inputs, torch.Tensor):
        return int(inputs.shape[0]) if inputs.dim() else None
    if isinstance(inputs, (list, tuple)):
        return len(inputs)
    return None


@MODEL_WRAPPERS.register_module()
class MMDeepSpeedEngineWrapper(nn.Module):
    """A model inside a DeepSpeed engine, with the steps the Runner's loops call.

    Args:
        model: a built ``deepspeed.DeepSpeedEngine`` (MMEngine's way), or None when the
            engine is built later by ``build_engine``.
        inputs_to_half: the positions (for list/tuple data) or keys (for dict data) of the
            preprocessed data to cast to the engine's half precision; only floating tensors
            are cast.
        module: the model to train when ``model`` is not given.
        build_engine: ``build_engine(optim_wrapper_or_None, batch_size_or_None) -> engine``,
            called once on first use (DeepSpeedStrategy passes its own).

    Example:
        >>> wrapper = strategy.wrap_model(model)  # DeepSpeedStrategy  # doctest: +SKIP
        >>> log_vars = wrapper.train_step(data, optim_wrapper)  # doctest: +SKIP
    """

    def __init__(
        self,
        *,
        model: Any = None,
        inputs_to_half: Sequence[int | str] | None = None,
        module: nn.Module | None = None,
        build_engine: Callable[[Any, int | None], Any] | None = None,
    ) -> None:
        super().__init__()
        if model is None and (module is None or build_engine is None):
            raise TypeError(
                "MMDeepSpeedEngineWrapper needs model (a DeepSpeed engine), or module and "
                "build_engine (to build the engine on first use)"
            )
        self.module = model.module if model is not None else module
        # Kept out of nn.Module's registry: the engine holds `module` too, and the wrapper's
        # state_dict keys must stay 'module.*' as for DDP.
        self.__dict__["_engine"] = model
        self.__dict__["_build_engine"] = build_engine
        self._inputs_to_half = None if inputs_to_half is None else list(inputs_to_half)

    # -- the engine -------------------------------------------------------------------------
    @property
    def engine_built(self) -> bool:
        """Whether the DeepSpeed engine exists yet."""
        return self.__dict__["_engine"] is not None

    def ensure_engine(self, optim_wrapper: Any = None, batch_size: int | None = None) -> Any:
        """The DeepSpeed engine, built now (with ``optim_wrapper``'s optimizer) if needed;
        ``batch_size`` is the train batch the engine will see, when known."""
        engine = self.__dict__["_engine"]
        if engine is None:
            engine = self.__dict__["_build_engine"](optim_wrapper, batch_size)
            self.__dict__["_engine"] = engine
        return engine

    @property
    def model(self) -> Any:
        """The DeepSpeed engine (MMEngine's attribute name)."""
        return self.ensure_engine()

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            # The engine's methods (save_checkpoint, backward...) through the wrapper, as
            # MMEngine's wrapper offers them.
            engine = self.__dict__.get("_engine")
            if engine is None:
                raise
            return getattr(engine, name)

    def train(self, mode: bool = True) -> MMDeepSpeedEngineWrapper:
        super().train(mode)
        engine = self.__dict__["_engine"]
        if engine is not None:
            engine.train(mode)
        return self

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.ensure_engine()(*args, **kwargs)

    # -- the steps --------------------------------------------------------------------------
    def train_step(self, data: Any, optim_wrapper: Any) -> dict[str, torch.Tensor]:
        """Preprocess, forward through the engine in 'loss' mode, parse the losses and let
        ``optim_wrapper`` (a DeepSpeedOptimWrapper) run the engine's backward and step."""
        engine = self.ensure_engine(optim_wrapper, batch_size_of(data))
        data = self.module.data_preprocessor(data, training=True)
        losses = self._run_forward(engine, self._cast_inputs_half(engine, data), "loss")
        parsed_loss, log_vars = self.module.parse_losses(losses)
        optim_wrapper.update_params(parsed_loss)
        return log_vars

    def val_step(self, data: Any) -> list:
        """The predictions of ``data`` (forward through the engine in 'predict' mode)."""
        engine = self.ensure_engine()
        data = self.module.data_preprocessor(data, False)
        return self._run_forward(engine, self._cast_inputs_half(engine, data), "predict")

    def test_step(self, data: Any) -> list:
        """The predictions of ``data``, as ``val_step``."""
        return self.val_step(data)

    @staticmethod
    def _run_forward(engine: Any, data: Any, mode: str) -> Any:
        if isinstance(data, Mapping):
            return engine(**data, mode=mode)
        if isinstance(data, (list, tuple)):
            return engine(*data, mode=mode)
        raise TypeError(
            f"the data preprocessor must return a dict, list or tuple, got {type(data).__name__}"
        )

    def _cast_inputs_half(self, engine: Any, data: Any) -> Any:
        if self._inputs_to_half is None:
            return data
        if engine.fp16_enabled():
            dtype = torch.float16
        elif engine.bfloat16_enabled():
            dtype = torch.bfloat16
        else:
            return data
        if isinstance(data, Mapping):
            return {
                key: _cast_floating(value, dtype) if key in self._inputs_to_half else value
                for key, value in data.items()
            }
        if isinstance(data, (list, tuple)):
            return type(data)(
                _cast_floating(value, dtype) if index in self._inputs_to_half else value
                for index, value in enumerate(data)
            )
        raise TypeError(f"inputs_to_half needs dict, list or tuple data, got {type(data).__name__}")
