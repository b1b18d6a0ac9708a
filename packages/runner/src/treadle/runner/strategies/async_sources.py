"""What an asynchronous save may copy in the background: the tensors that only an optimizer
step changes.

Between a save (after an iteration's optimizer step) and the next step, training runs a forward
and a backward pass: they change buffers (BatchNorm's running statistics) and gradients, never
the parameters nor the optimizer's state. Those are copied to host memory in the background,
and the optimizers' next ``step()`` waits for the copy (see
:class:`~treadle.runner.checkpoint.async_writer.AsyncCheckpointWriter`); validation, which may
swap weights in place, waits for it too (``wait_for_host_copy``). Hooks that keep weights of
their own may offer them as well (``hook_tensors``), waiting for the copy before they change
them: EMAHook's averaged weights change after the optimizer step, and with gradient
accumulation in iterations that have none.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from treadle.runner.checkpoint.host_copy import hook_tensors, wait_for_host_copy

__all__ = ["hook_tensors", "optimizers_of", "step_changed_tensors", "wait_for_host_copy"]


def optimizers_of(optim_wrapper: Any) -> list[torch.optim.Optimizer]:
    """The torch optimizers inside an OptimWrapper or OptimWrapperDict (none for None).

    Example:
        >>> optimizers_of(OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1)))
        ... # doctest: +SKIP
        [SGD (...)]
    """
    wrappers = getattr(optim_wrapper, "optim_wrappers", None)
    if wrappers is not None:
        return [opt for wrapper in wrappers.values() for opt in optimizers_of(wrapper)]
    optimizer = getattr(optim_wrapper, "optimizer", None)
    return [optimizer] if isinstance(optimizer, torch.optim.Optimizer) else []


def step_changed_tensors(
    model: nn.Module, optimizers: list[torch.optim.Optimizer]
) -> list[torch.Tensor]:
    """The parameters of ``model`` and the tensors of the optimizers' state.

    Example:
        >>> len(step_changed_tensors(nn.Linear(2, 2), []))
        2
    """
    tensors = [parameter.detach() for parameter in model.parameters()]
    for optimizer in optimizers:
        for state in optimizer.state.values():
            tensors.extend(v for v in state.values() if isinstance(v, torch.Tensor))
    return tensors
