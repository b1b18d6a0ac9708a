"""SingleDeviceStrategy: one process on one device, or one per device with DDP."""

from __future__ import annotations

from typing import Any

from torch import nn
from torch.nn.parallel import DistributedDataParallel

from treadle import dist
from treadle.registry.suggestions import missing_type_message
from treadle.runner.device import get_device
from treadle.runner.model import (
    convert_sync_batchnorm,
    is_model_wrapper,
    revert_sync_batchnorm,
)
from treadle.runner.registry import MODEL_WRAPPERS, STRATEGIES

from .base import BaseStrategy


def check_model_wrapper_cfg(cfg: Any, name: str) -> None:
    """Refuse a wrapper config that is not a dict, or whose ``type`` names no registered model
    wrapper (with the closest names), when it is given rather than when a process group first
    needs it: a one-process run would otherwise accept a misspelling silently."""
    if cfg is None:
        return
    if not isinstance(cfg, dict):
        raise TypeError(
            f"{name} must be a dict (type and arguments of a model wrapper) or None, got "
            f"{type(cfg).__name__}"
        )
    wrapper_type = cfg.get("type", "MMDistributedDataParallel")
    if isinstance(wrapper_type, str) and MODEL_WRAPPERS.get(wrapper_type) is None:
        raise KeyError(f"{name}: {missing_type_message(MODEL_WRAPPERS, wrapper_type)}")


@STRATEGIES.register_module()
class SingleDeviceStrategy(BaseStrategy):
    """The model on ``get_device()``; when a process group exists, wrapped in
    ``model_wrapper_cfg`` (MMDistributedDataParallel by default), as MMEngine's Runner does.

    Args:
        model_wrapper_cfg: the wrapper's config (``type`` and its arguments); None is
            ``MMDistributedDataParallel(broadcast_buffers=False,
            find_unused_parameters=find_unused_parameters)``.
        find_unused_parameters: DDP's argument when no ``model_wrapper_cfg`` is given.
        sync_bn: 'torch' or 'mmcv' to convert BatchNorm layers to SyncBatchNorm when
            distributed.
        dist_cfg: keyword arguments of :func:`treadle.dist.init_dist`.
        kwargs: MMEngine's BaseStrategy arguments (``work_dir``, ``experiment_name``...).

    Example:
        >>> strategy = SingleDeviceStrategy()
        >>> model = strategy.prepare(nn.Linear(2, 1))
        >>> next(model.parameters()).device.type == get_device()
        True
    """

    def __init__(
        self,
        *,
        model_wrapper_cfg: dict | None = None,
        find_unused_parameters: bool = False,
        sync_bn: str | None = None,
        dist_cfg: dict | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(dist_cfg=dist_cfg, **kwargs)
        check_model_wrapper_cfg(model_wrapper_cfg, "model_wrapper_cfg")
        self.model_wrapper_cfg = model_wrapper_cfg
        self.find_unused_parameters = find_unused_parameters
        self.sync_bn = sync_bn

    def convert_model(self, model: nn.Module) -> nn.Module:
        """One process: SyncBatchNorm layers become BatchNorm (they need a process group);
        in a process group, BatchNorm becomes SyncBatchNorm when ``sync_bn`` is set."""
        if not dist.is_distributed():
            return revert_sync_batchnorm(model)
        if self.sync_bn is not None:
            return convert_sync_batchnorm(model, self.sync_bn)
        return model

    def wrap_model(self, model: nn.Module) -> nn.Module:
        if is_model_wrapper(model):
            if self.model_wrapper_cfg is not None:
                raise TypeError(
                    "the model is already wrapped (in a "
                    f"{type(model).__name__}), so model_wrapper_cfg must be None, got "
                    f"{self.model_wrapper_cfg}"
                )
            return model
        model = self.convert_model(model.to(get_device()))
        if not dist.is_distributed():
            return model
        cfg = dict(self.model_wrapper_cfg or {})
        cfg.setdefault("type", "MMDistributedDataParallel")
        if self.model_wrapper_cfg is None:
            cfg.update(broadcast_buffers=False, find_unused_parameters=self.find_unused_parameters)
        default_args: dict[str, Any] = {"module": model}
        wrapper_type = MODEL_WRAPPERS.get(cfg["type"]) if isinstance(cfg["type"], str) else None
        wrapper_type = wrapper_type or cfg["type"]
        first = next(model.parameters(), None)
        # DDP takes device_ids only for a model on an accelerator (gloo trains on the CPU).
        on_accelerator = first is not None and first.device.type != "cpu"
        if (
            isinstance(wrapper_type, type)
            and issubclass(wrapper_type, DistributedDataParallel)
            and on_accelerator
        ):
            default_args["device_ids"] = [dist.get_local_rank()]
        return MODEL_WRAPPERS.build(cfg, default_args=default_args)
