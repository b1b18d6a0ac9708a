"""ColossalAIModelWrapper: the train, val and test steps of a model boosted by ColossalAI.

Like MMDeepSpeedEngineWrapper it is an ``nn.Module`` holding the user's model as ``module``
and ColossalAI's boosted model (MMEngine's ``model_wrapper``) outside its own registry, built on
first use: the booster needs the optimizer, which the Runner builds after wrapping.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from treadle.runner.registry import MODEL_WRAPPERS


@MODEL_WRAPPERS.register_module(name=["ColossalAIModelWrapper", "CollosalAIModelWrapper"])
class ColossalAIModelWrapper(nn.Module):
    """A model inside ColossalAI's booster.

    Args:
        model_wrapper: the boosted model (``colossalai.interface.ModelWrapper``), or None when
            ``boost`` builds it on first use.
        model: the model to train.
        boost: ``boost(optim_wrapper_or_None) -> boosted model``, called once on first use
            (ColossalAIStrategy passes its own).

    Example:
        >>> wrapper = strategy.wrap_model(model)  # ColossalAIStrategy  # doctest: +SKIP
        >>> wrapper.train_step(data, optim_wrapper)  # doctest: +SKIP
    """

    def __init__(
        self,
        model_wrapper: Any = None,
        model: nn.Module | None = None,
        boost: Callable[[Any], Any] | None = None,
    ) -> None:
        super().__init__()
        if model is None or (model_wrapper is None and boost is None):
            raise TypeError(
                "ColossalAIModelWrapper needs model and either model_wrapper (the boosted "
                "model) or boost (to boost it on first use)"
            )
        self.module = model
        self.__dict__["_boosted"] = model_wrapper
        self.__dict__["_boost"] = boost

    @property
    def boosted(self) -> bool:
        """Whether the booster has wrapped the model yet."""
        return self.__dict__["_boosted"] is not None

    def ensure_boosted(self, optim_wrapper: Any = None) -> Any:
        """The boosted model, boosting it now (with ``optim_wrapper``) if needed."""
        boosted = self.__dict__["_boosted"]
        if boosted is None:
            boosted = self.__dict__["_boost"](optim_wrapper)
            self.__dict__["_boosted"] = boosted
        return boosted

    @property
    def model_wrapper(self) -> Any:
        """The boosted model (MMEngine's attribute name)."""
        return self.ensure_boosted()

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.ensure_boosted()(*args, **kwargs)

    def train_step(self, data: Any, optim_wrapper: Any) -> dict[str, torch.Tensor]:
        """Preprocess, forward in 'loss' mode inside the optimizer wrapper's context (no
        gradient sync while accumulating), parse the losses, update."""
        boosted = self.ensure_boosted(optim_wrapper)
        data = self.module.data_preprocessor(data, training=True)
        with optim_wrapper.optim_context(boosted):
            losses = self._run_forward(boosted, data, "loss")
        parsed_loss, log_vars = self.module.parse_losses(losses)
        optim_wrapper.update_params(parsed_loss)
        return log_vars

    def val_step(self, data: Any) -> list:
        """The predictions of ``data`` (forward through the boosted model)."""
        boosted = self.ensure_boosted()
        data = self.module.data_preprocessor(data, False)
        return self._run_forward(boosted, data, "predict")

    def test_step(self, data: Any) -> list:
        """The predictions of ``data``, as ``val_step``."""
        return self.val_step(data)

    @staticmethod
    def _run_forward(boosted: Any, data: Any, mode: str) -> Any:
        if isinstance(data, Mapping):
            return boosted(**data, mode=mode)
        if isinstance(data, (list, tuple)):
            return boosted(*data, mode=mode)
        raise TypeError(
            f"the data preprocessor must return a dict, list or tuple, got {type(data).__name__}"
        )
