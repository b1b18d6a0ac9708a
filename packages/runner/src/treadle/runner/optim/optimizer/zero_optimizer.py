"""ZeroRedundancyOptimizer: torch's ZeRO stage-1 optimizer, built from a config that names the
local optimizer (``optimizer_type='AdamW'``)."""

from __future__ import annotations

from typing import Any

import torch

from treadle.runner.registry import OPTIMIZERS

from .third_party import real_optimizer_class

try:
    from torch.distributed.optim import ZeroRedundancyOptimizer as _TorchZero
except ImportError:  # a torch built without distributed support
    _TorchZero = None


def _local_optimizer_class(optimizer_type: Any) -> type[torch.optim.Optimizer]:
    """The optimizer class ``optimizer_type`` names: a name in OPTIMIZERS (any registered
    optimizer, not only torch.optim's) or a class."""
    if isinstance(optimizer_type, str):
        with OPTIMIZERS.switch_scope_and_registry(None) as registry:
            found = registry.get(optimizer_type)
            if found is None:
                from treadle.registry.suggestions import missing_type_message

                raise KeyError(
                    f"ZeroRedundancyOptimizer's optimizer_type: "
                    f"{missing_type_message(registry, optimizer_type)}"
                )
    else:
        found = optimizer_type
    found = real_optimizer_class(found)
    if not (isinstance(found, type) and issubclass(found, torch.optim.Optimizer)):
        raise TypeError(
            f"ZeroRedundancyOptimizer's optimizer_type must name a torch.optim.Optimizer "
            f"subclass, got {type(optimizer_type).__name__}: {optimizer_type!r}"
        )
    if found is ZeroRedundancyOptimizer:
        raise ValueError("ZeroRedundancyOptimizer's optimizer_type cannot be itself")
    return found


# Registered in OPTIMIZERS by a stand-in (see builder.py), so that importing treadle.runner.optim
# does not import torch.distributed.optim.
class ZeroRedundancyOptimizer(_TorchZero or torch.optim.Optimizer):
    """Shard the state of an optimizer across the ranks of a process group (ZeRO stage 1).

    Each rank keeps the state of about ``1 / world_size`` of the parameters and updates only
    those, then broadcasts them to the others. A wrapper over
    ``torch.distributed.optim.ZeroRedundancyOptimizer`` that takes the local optimizer by name.
    torch.distributed must be initialized first (``launcher='pytorch'``, torchrun...).

    Args:
        params: the parameters (or param groups) to optimize.
        optimizer_type: the local optimizer: a name in OPTIMIZERS (``'AdamW'``, ``'Lion'``...)
            or a class.
        **kwargs: arguments of the local optimizer (``lr``...) and of torch's
            ZeroRedundancyOptimizer (``process_group``, ``parameters_as_bucket_view``...).

    ``state_dict()`` gathers the whole state on rank 0 of the group (every rank must call it)
    and returns it there; the other ranks return ``{}``. ``load_state_dict`` takes that whole
    state on every rank, without changing the dict it is given.

    Example:
        >>> optim_wrapper = dict(optimizer=dict(
        ...     type='ZeroRedundancyOptimizer', optimizer_type='AdamW', lr=1e-3))
    """

    def __init__(self, params: Any, optimizer_type: str | type, **kwargs: Any) -> None:
        if _TorchZero is None or not torch.distributed.is_available():
            raise RuntimeError(
                "ZeroRedundancyOptimizer needs torch.distributed, which this torch build lacks"
            )
        if not torch.distributed.is_initialized():
            raise RuntimeError(
                "ZeroRedundancyOptimizer shards the optimizer across a process group, but "
                "torch.distributed is not initialized: launch with torchrun (launcher='pytorch') "
                "or call treadle.dist.init_dist first, or use a plain optimizer such as "
                f"type={optimizer_type!r}"
            )
        super().__init__(list(params), _local_optimizer_class(optimizer_type), **kwargs)

    def state_dict(self) -> dict[str, Any]:
        """The whole optimizer state on rank 0 of the process group, ``{}`` on the others; a
        collective: every rank of the group must call it."""
        self.consolidate_state_dict(to=0)
        # self.rank is the rank within the optimizer's process group, where `to` counts.
        return super().state_dict() if self.rank == 0 else {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load the whole state (what ``state_dict()`` gave on rank 0) on every rank; each keeps
        its share. The caller's dict is left as it was (torch's clears the others' shares in
        it, which broke loading one checkpoint dict into two optimizers)."""
        super().load_state_dict(dict(state_dict, state=dict(state_dict["state"])))
