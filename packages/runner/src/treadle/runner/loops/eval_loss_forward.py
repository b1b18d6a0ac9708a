"""How an eval loop with ``compute_loss=True`` runs the model on one batch: preprocess once,
then the predict forward and the loss forward on the same data.

A model that writes its own ``val_step``/``test_step`` (or sits in a wrapper treadle does not
know) keeps it: its predictions come from that step, and the batch is preprocessed a second
time for the loss forward, since the custom step may do anything with it.

Errors of the loss forward that mean "this model cannot compute a validation loss" are turned
into messages that name the model class and what it lacks or returned.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from treadle.runner.model import BaseModel, unwrap_model
from treadle.runner.model.base_model import run_forward

# "forward() missing 1 required positional argument: 'gt'" / "... arguments: 'a' and 'b'"
_MISSING_ARGUMENT = re.compile(r"missing \d+ required (?:positional|keyword-only) arguments?: (.+)")
_QUOTED = re.compile(r"'([^']+)'")
_KNOWN_WRAPPERS = "treadle.runner.model.wrappers"


def _data_keys(data: Any) -> list[str]:
    if isinstance(data, Mapping):
        return [str(key) for key in data]
    if isinstance(data, (list, tuple)):
        return [f"[{index}]" for index in range(len(data))]
    return []


def _empty_keys(data: Any) -> list[str]:
    # A preprocessor hands on data_samples=None when the batch has none (ImgDataPreprocessor).
    if isinstance(data, Mapping):
        return [str(key) for key, value in data.items() if value is None]
    return []


def _unsupplied_parameters(model: nn.Module, data: Any) -> list[str]:
    """The parameters of ``model.forward`` (but ``mode``) that ``data`` does not pass."""
    try:
        parameters = inspect.signature(model.forward).parameters.values()
    except (TypeError, ValueError):
        return []
    named = [
        parameter
        for parameter in parameters
        if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY)
        and parameter.name != "mode"
    ]
    if isinstance(data, Mapping):
        return [parameter.name for parameter in named if parameter.name not in data]
    if isinstance(data, (list, tuple)):
        return [parameter.name for parameter in named[len(data) :]]
    return []


def batch_size(data: Any) -> int:
    """The number of samples in a preprocessed batch: the length of its ``data_samples``, else
    the first dimension (or length) of its inputs; 1 when it cannot tell.

    Example:
        >>> batch_size(dict(inputs=torch.zeros(3, 2), data_samples=None))
        3
    """
    samples = inputs = None
    if isinstance(data, Mapping):
        samples, inputs = data.get("data_samples"), data.get("inputs")
    elif isinstance(data, (list, tuple)) and data:
        samples = data[1] if len(data) > 1 else None
        inputs = data[0]
    for value in (samples, inputs):
        if isinstance(value, torch.Tensor) and value.dim() > 0:
            return int(value.shape[0])
        if isinstance(value, (list, tuple)) and value:
            return len(value)
    return 1


class EvalForward:
    """Runs one eval batch through ``model`` in predict mode and, in loss mode, returns the
    losses as ``parse_losses`` would log them (tensors, still on the device) and the batch's
    sample count.

    Args:
        model: the runner's model, wrapped or not.
        stage: 'val' or 'test' (the step to call and the names in messages).

    Example:
        >>> forward = EvalForward(runner.model, 'val')  # doctest: +SKIP
        >>> predictions, log_vars, count = forward(data_batch)  # doctest: +SKIP
        >>> sorted(log_vars)  # doctest: +SKIP
        ['loss', 'loss_cls']
    """

    def __init__(self, model: nn.Module, stage: str) -> None:
        self.model = model
        self.stage = stage
        self.inner = unwrap_model(model)
        self.name = type(self.inner).__name__
        preprocessor = getattr(self.inner, "data_preprocessor", None)
        if not callable(preprocessor) or not hasattr(self.inner, "parse_losses"):
            raise TypeError(
                f"{stage}_cfg compute_loss=True needs a BaseModel (a data_preprocessor, "
                f"forward(mode='loss') and parse_losses); the model is {self.name}, which has "
                f"{'no data_preprocessor' if not callable(preprocessor) else 'no parse_losses'}"
            )
        step = f"{stage}_step"
        own_step = getattr(type(self.inner), step, None) is not getattr(BaseModel, step)
        known_wrapper = model is self.inner or type(model).__module__.startswith(_KNOWN_WRAPPERS)
        # The shared path reproduces BaseModel's step; anything custom keeps its own step.
        self.shared = not own_step and known_wrapper
        self._step = getattr(model, step)
        self._forward = self._engine_forward if hasattr(model, "ensure_engine") else None

    def _engine_forward(self, data: Any, mode: str) -> Any:
        # DeepSpeed: the forward runs through the engine, inputs cast as its val_step does.
        engine = self.model.ensure_engine()
        cast = getattr(self.model, "_cast_inputs_half", None)
        data = cast(engine, data) if cast is not None else data
        return run_forward(engine, data, mode)

    def _run(self, data: Any, mode: str) -> Any:
        if self._forward is not None:
            return self._forward(data, mode)
        own = getattr(self.inner, "_run_forward", None)
        return own(data, mode) if own is not None else run_forward(self.inner, data, mode)

    def __call__(self, data_batch: Any) -> tuple[Any, dict[str, torch.Tensor], int]:
        """``(predictions, losses, sample count)`` of one batch."""
        if self.shared:
            data = self.inner.data_preprocessor(data_batch, False)
            predictions = self._run(data, "predict")
        else:
            predictions = self._step(data_batch)
            data = self.inner.data_preprocessor(data_batch, False)
        return predictions, self.losses(data), batch_size(data)

    def losses(self, data: Any) -> dict[str, torch.Tensor]:
        """The model's losses on preprocessed ``data``, reduced and summed as for logging."""
        try:
            losses = self._run(data, "loss")
        except NotImplementedError as error:
            raise TypeError(
                f"{self.stage}_cfg compute_loss=True: {self.name} has no loss mode: "
                f"forward(mode='loss') raised NotImplementedError({error})"
            ) from error
        except (KeyError, TypeError, AttributeError, ValueError) as error:
            missing = self._missing_inputs(error, data)
            if missing is None:
                error.add_note(
                    f"while computing the {self.stage} loss of {self.name} "
                    f"({self.stage}_cfg compute_loss=True)"
                )
                raise
            raise ValueError(
                f"{self.stage}_cfg compute_loss=True: the loss mode of {self.name} needs "
                f"{', '.join(map(repr, missing))}, which the {self.stage} data lacks (the "
                f"preprocessed batch holds {_data_keys(data)}; empty: {_empty_keys(data)}); "
                f"{type(error).__name__}: {error}"
            ) from error
        if not isinstance(losses, Mapping) or not losses:
            what = f"{type(losses).__name__}" + (": empty" if isinstance(losses, Mapping) else "")
            raise TypeError(
                f"{self.stage}_cfg compute_loss=True: {self.name} has no loss mode: "
                f"forward(mode='loss') returned {what}, not a dict of losses"
            )
        _, log_vars = self.inner.parse_losses(losses)
        return log_vars

    def _missing_inputs(self, error: Exception, data: Any) -> list[str] | None:
        """The input names ``error`` says are missing, or None when it is about something
        else."""
        unsupplied = _unsupplied_parameters(self.inner, data)
        if isinstance(error, KeyError) and error.args:
            return [str(error.args[0])]
        if isinstance(error, TypeError):
            found = _MISSING_ARGUMENT.search(str(error))
            if found:
                return _QUOTED.findall(found.group(1))
        # Any other failure while an input is empty (None), or left to its default because the
        # batch lacks it, is most likely about that input.
        return _empty_keys(data) + unsupplied or None
