"""Seeing through model wrappers (DDP, FSDP, TTA models): a checkpoint holds the weights of the
wrapped model, under the names it has without its wrapper."""

from __future__ import annotations

from torch import nn

from treadle.runner.model import BaseTTAModel, is_model_wrapper


def is_wrapper(module: nn.Module) -> bool:
    """Whether ``module`` is a registered model wrapper (its weights live in ``.module``)."""
    return is_model_wrapper(module)


def is_tta_model(module: nn.Module) -> bool:
    """Whether ``module`` is a test-time-augmentation model, which loads into ``.module``."""
    return isinstance(module, BaseTTAModel)
