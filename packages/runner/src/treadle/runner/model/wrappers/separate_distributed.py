"""MMSeparateDistributedDataParallel: one DDP per submodule, for models (GANs) whose parts
are updated by separate optimizers at separate times."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

from treadle.runner.device import get_device
from treadle.runner.registry import MODEL_WRAPPERS

from .distributed import MMDistributedDataParallel


@MODEL_WRAPPERS.register_module()
class MMSeparateDistributedDataParallel(DistributedDataParallel):
    """Wrap each direct submodule that has trainable parameters in its own
    MMDistributedDataParallel and leave the model's own train, val and test steps in charge.

    One DDP around a whole GAN fails: while the generator is updated the discriminator's
    parameters get no gradient, which DDP reports as an error. Wrapping the parts separately
    lets the model's ``train_step`` update them one at a time. Submodules without trainable
    parameters are only moved to the device.

    It is a DistributedDataParallel by type (so the runner treats it as a DDP wrapper) but
    does not run DDP's constructor: the wrapping happens per submodule.

    Args:
        module: the model whose direct submodules are wrapped.
        broadcast_buffers: DDP's ``broadcast_buffers`` for every wrapped submodule.
        find_unused_parameters: DDP's ``find_unused_parameters`` for every wrapped submodule.
        **kwargs: other arguments of MMDistributedDataParallel.

    Example:
        >>> gan = GAN(generator, discriminator)  # doctest: +SKIP
        >>> model = MMSeparateDistributedDataParallel(gan)  # doctest: +SKIP
        >>> isinstance(model.module.generator, MMDistributedDataParallel)  # doctest: +SKIP
        True
    """

    def __init__(
        self,
        module: nn.Module,
        broadcast_buffers: bool = False,
        find_unused_parameters: bool = False,
        **kwargs: Any,
    ) -> None:
        nn.Module.__init__(self)  # not DDP's: nothing is wrapped as a whole
        self.module = module
        device = get_device()
        for name, submodule in list(module._modules.items()):
            if submodule is None:
                continue
            submodule = submodule.to(device)
            if any(param.requires_grad for param in submodule.parameters()):
                submodule = MMDistributedDataParallel(
                    module=submodule,
                    broadcast_buffers=broadcast_buffers,
                    find_unused_parameters=find_unused_parameters,
                    **kwargs,
                )
            module._modules[name] = submodule

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped model's forward (DDP's own needs the state its skipped constructor would
        have made; the parts synchronize through their own wrappers)."""
        return self.module(*args, **kwargs)

    def train_step(self, data: Any, optim_wrapper: Any) -> dict[str, torch.Tensor]:
        """The wrapped model's train step (it receives an OptimWrapperDict, one per part)."""
        return self.module.train_step(data, optim_wrapper)

    def val_step(self, data: Any) -> list:
        """The wrapped model's predictions."""
        return self.module.val_step(data)

    def test_step(self, data: Any) -> list:
        """The wrapped model's predictions."""
        return self.module.test_step(data)

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Skip the gradient synchronization of every wrapped submodule (for accumulation)."""
        with ExitStack() as stack:
            for submodule in self.module._modules.values():
                if isinstance(submodule, DistributedDataParallel):
                    stack.enter_context(submodule.no_sync())
            yield

    def train(self, mode: bool = True) -> MMSeparateDistributedDataParallel:
        """Set training mode on the model (DDP's own ``train`` needs the state its skipped
        constructor would have made)."""
        self.training = mode
        self.module.train(mode)
        return self
