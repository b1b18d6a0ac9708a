"""``ColossalAIOptimWrapper``: the optimizer wrapper of a ColossalAIStrategy run.

After the strategy boosts the model and optimizer, ``optimizer`` is ColossalAI's
OptimizerWrapper: backward goes through it (the plugin may scale or shard gradients) and the
accumulation skips gradient synchronization through the booster. Importing it does not import
colossalai.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

import torch
from torch import nn

from treadle.runner.registry import OPTIM_WRAPPERS

from .optimizer_wrapper import OptimWrapper

_NO_CONTEXT = contextlib.nullcontext()


@OPTIM_WRAPPERS.register_module()
class ColossalAIOptimWrapper(OptimWrapper):
    """An OptimWrapper whose backward and step go through ColossalAI's boosted optimizer.

    Args:
        optimizer: the built torch optimizer (or ColossalAI's HybridAdam, CPUAdam...); the
            strategy replaces it by the boosted one.
        booster: the ``colossalai.booster.Booster`` (the strategy sets it).
        accumulative_counts: update every this many calls (gradients are not synchronized in
            between when the plugin supports ``no_sync``).
        clip_grad: refused: ColossalAI clips in the plugin (e.g. ``max_norm`` of
            GeminiPlugin / LowLevelZeroPlugin).

    Example:
        >>> optim_wrapper = dict(type='ColossalAIOptimWrapper',
        ...                      optimizer=dict(type='AdamW', lr=1e-3))
    """

    def __init__(
        self,
        optimizer: torch.optim.Optimizer,
        booster: Any = None,
        accumulative_counts: int = 1,
        clip_grad: Mapping[str, Any] | None = None,
    ) -> None:
        if clip_grad is not None:
            raise ValueError(
                "ColossalAIOptimWrapper does not take clip_grad: ColossalAI clips gradients in "
                "the plugin, e.g. plugin=dict(type='LowLevelZeroPlugin', max_norm=1.0)"
            )
        super().__init__(optimizer, accumulative_counts=accumulative_counts)
        self.booster = booster

    def optim_context(self, model: nn.Module) -> contextlib.AbstractContextManager:
        """The booster's ``no_sync`` on calls that accumulate without updating, where the
        plugin supports it."""
        if self.booster is None or self.should_sync():
            return _NO_CONTEXT
        if not self.booster.plugin.support_no_sync():
            return _NO_CONTEXT
        return self.booster.no_sync(model, self.optimizer)

    def backward(self, loss: torch.Tensor, **kwargs: Any) -> None:
        """The boosted optimizer's backward (loss scaling, sharded gradients), counted."""
        backward = getattr(self.optimizer, "backward", None)
        if callable(backward):
            backward(loss, **kwargs)
        else:
            loss.backward(**kwargs)
        self._inner_count += 1
