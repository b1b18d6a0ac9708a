"""MMDistributedDataParallel: DistributedDataParallel with the model's train, val and test
steps; torch's own DataParallel and DistributedDataParallel are registered as wrappers too."""

from __future__ import annotations

import inspect
from typing import Any

import torch
from torch.nn.parallel import DataParallel, DistributedDataParallel

from treadle.runner.registry import MODEL_WRAPPERS

from ..base_model import OptimWrapperLike, run_forward
from ..utils import detect_anomalous_params

_TAKES_FORWARD_SYNC_BUFFERS = (
    "forward_sync_buffers" in inspect.signature(DistributedDataParallel.__init__).parameters
)

MODEL_WRAPPERS.register_module(module=DistributedDataParallel)
MODEL_WRAPPERS.register_module(module=DataParallel)


@MODEL_WRAPPERS.register_module()
class MMDistributedDataParallel(DistributedDataParallel):
    """DistributedDataParallel that the runner's loops drive through ``train_step``,
    ``val_step`` and ``test_step``.

    ``train_step`` calls the wrapped model's data preprocessor and ``parse_losses``, but runs
    forward through DDP so that gradients are averaged across processes during backward;
    ``val_step`` and ``test_step`` are the wrapped model's (no gradients to synchronize).

    Args:
        module: the model (a BaseModel, or anything with ``data_preprocessor`` and
            ``parse_losses`` for training).
        detect_anomalous_params: log every parameter the loss does not reach, each train
            step (slow: for debugging "unused parameters" errors of DDP).
        **kwargs: DistributedDataParallel's arguments (device_ids, broadcast_buffers,
            find_unused_parameters, bucket_cap_mb, static_graph...). On a torch whose DDP
            has ``forward_sync_buffers``, ``broadcast_buffers`` is passed as that (buffers are
            then also made equal to rank 0's when wrapping).

    Example:
        >>> model = MMDistributedDataParallel(  # doctest: +SKIP
        ...     MyModel().cuda(), device_ids=[local_rank])
        >>> log_vars = model.train_step(data_batch, optim_wrapper)  # doctest: +SKIP
    """

    def __init__(self, module: Any, detect_anomalous_params: bool = False, **kwargs: Any) -> None:
        if _TAKES_FORWARD_SYNC_BUFFERS and "broadcast_buffers" in kwargs:
            # torch 2.13 deprecates broadcast_buffers (a FutureWarning at every start) for
            # forward_sync_buffers, which also makes every rank start from rank 0's buffers.
            broadcast = kwargs.pop("broadcast_buffers")
            kwargs.setdefault("forward_sync_buffers", broadcast)
        super().__init__(module=module, **kwargs)
        self.detect_anomalous_params = detect_anomalous_params

    def train_step(self, data: Any, optim_wrapper: OptimWrapperLike) -> dict[str, torch.Tensor]:
        """One training iteration, with gradients synchronized across processes."""
        with optim_wrapper.optim_context(self):
            data = self.module.data_preprocessor(data, training=True)
            losses = self._run_forward(data, mode="loss")
        parsed_loss, log_vars = self.module.parse_losses(losses)
        if self.detect_anomalous_params:
            # Before backward: DDP's own error about unused parameters comes from backward.
            detect_anomalous_params(parsed_loss, model=self)
        optim_wrapper.update_params(parsed_loss)
        return log_vars

    def val_step(self, data: Any) -> list:
        """The wrapped model's predictions."""
        return self.module.val_step(data)

    def test_step(self, data: Any) -> list:
        """The wrapped model's predictions."""
        return self.module.test_step(data)

    def _run_forward(self, data: Any, mode: str) -> Any:
        return run_forward(self, data, mode)
