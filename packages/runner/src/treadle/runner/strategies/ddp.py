"""DDPStrategy: one process per device, the model in a DistributedDataParallel wrapper."""

from __future__ import annotations

from typing import Any

from torch import nn
from torch.nn.parallel import DistributedDataParallel

from treadle import dist
from treadle.runner.device import current_device, dist_backend_for
from treadle.runner.model import convert_sync_batchnorm, is_model_wrapper
from treadle.runner.registry import MODEL_WRAPPERS, STRATEGIES

from .single_device import SingleDeviceStrategy, check_model_wrapper_cfg

SYNC_BN_CHOICES = ("torch", "mmcv")
# broadcast_buffers=False as in MMEngine (OpenMMLab's repositories rely on it): buffers are
# synchronized by SyncBuffersHook or SyncBatchNorm, not by DDP at every forward.
DEFAULT_MODEL_WRAPPER = {"type": "MMDistributedDataParallel", "broadcast_buffers": False}


def _wrapper_class(wrapper_type: Any) -> type | None:
    if isinstance(wrapper_type, type):
        return wrapper_type
    if isinstance(wrapper_type, str):
        found = MODEL_WRAPPERS.get(wrapper_type)
        return found if isinstance(found, type) else None
    return None


@STRATEGIES.register_module()
class DDPStrategy(SingleDeviceStrategy):
    """Distributed data parallel training: every process holds the whole model on its own
    device and gradients are averaged across processes during backward.

    The model goes to this process's device (its local rank's accelerator, or the CPU with
    gloo), BatchNorm layers become SyncBatchNorm when ``sync_bn`` asks, and the model is wrapped
    in ``model_wrapper`` (``MMDistributedDataParallel(broadcast_buffers=False)`` by default).

    Args:
        model_wrapper: the wrapper's config, a dict with ``type`` (a name registered in
            MODEL_WRAPPERS or a class; MMDistributedDataParallel when left out) and its
            arguments (``find_unused_parameters``, ``detect_anomalous_params``,
            ``static_graph``...). ``module`` and, on accelerators, ``device_ids`` are filled in.
        sync_bn: 'torch' or 'mmcv' to turn BatchNorm layers into that SyncBatchNorm; None keeps
            them.
        **kwargs: the arguments of the base strategy (``dist_cfg``, ``work_dir``...).

    Example:
        >>> # torchrun --nproc-per-node 2 train.py
        >>> strategy = DDPStrategy(
        ...     model_wrapper=dict(find_unused_parameters=True), sync_bn='torch')
        >>> strategy.setup_env(launcher='pytorch', dist_cfg=dict(backend='gloo'))  # doctest: +SKIP
        >>> ddp = strategy.prepare(model)  # doctest: +SKIP
        >>> type(ddp).__name__  # doctest: +SKIP
        'MMDistributedDataParallel'
    """

    def __init__(
        self,
        *,
        model_wrapper: dict | None = None,
        sync_bn: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        # A misspelt wrapper type fails here, with the closest registered names.
        check_model_wrapper_cfg(model_wrapper, "DDPStrategy(model_wrapper=...)")
        if sync_bn is not None and sync_bn not in SYNC_BN_CHOICES:
            raise ValueError(
                f"DDPStrategy(sync_bn=...) must be 'torch', 'mmcv' or None, got {sync_bn!r}"
            )
        self.model_wrapper = None if model_wrapper is None else dict(model_wrapper)
        self.sync_bn = sync_bn

    # -- environment --------------------------------------------------------------------
    def _setup_distributed(
        self, launcher: str = "pytorch", backend: str | None = None, **kwargs: Any
    ) -> None:
        """Start the process group unless one exists; the backend defaults to the one of the
        device in use (nccl on CUDA, gloo on the CPU...) where MMEngine always asks for nccl."""
        if not dist.is_distributed():
            dist.init_dist(launcher, backend=backend or dist_backend_for(), **kwargs)

    # -- model ----------------------------------------------------------------------------
    def convert_model(self, model: nn.Module) -> nn.Module:
        """``model`` with its BatchNorm layers turned into SyncBatchNorm when ``sync_bn`` is
        set; unchanged otherwise."""
        if self.sync_bn is None:
            return model
        return convert_sync_batchnorm(model, self.sync_bn)

    def wrap_model(self, model: nn.Module) -> nn.Module:
        """``model`` on this process's device, converted, in its DDP wrapper (a model that is
        already wrapped is returned as it is)."""
        if is_model_wrapper(model):
            return model
        if not dist.is_distributed():
            raise RuntimeError(
                "DDPStrategy needs a process group, and none is initialized: launch with "
                "`torchrun --nproc-per-node N -m treadle.runner train CONFIG --launcher "
                "pytorch` (or --launcher slurm under srun), or train in one process with "
                "strategy=dict(type='SingleDeviceStrategy')"
            )
        device = current_device()
        if self.sync_bn is not None and device.type == "cpu":
            # DDP would refuse it deep inside its constructor ("only work with GPU modules").
            raise ValueError(
                f"DDPStrategy(sync_bn={self.sync_bn!r}) needs the model on a GPU: SyncBatchNorm "
                f"does not run on the CPU (this process trains on the CPU); leave sync_bn=None "
                f"(cfg.sync_bn) on CPUs"
            )
        model = self.convert_model(model.to(device))
        cfg = dict(self.model_wrapper or DEFAULT_MODEL_WRAPPER)
        cfg.setdefault("type", DEFAULT_MODEL_WRAPPER["type"])
        default_args: dict[str, Any] = {"module": model}
        wrapper_class = _wrapper_class(cfg["type"])
        # DDP takes device_ids only for a module on one accelerator; on the CPU (gloo) it must
        # be None, which MMEngine's DDPStrategy gets wrong.
        if (
            device.index is not None
            and wrapper_class is not None
            and issubclass(wrapper_class, DistributedDataParallel)
        ):
            default_args["device_ids"] = [device.index]
        return MODEL_WRAPPERS.build(cfg, default_args=default_args)

    # MMEngine's name for the same step.
    _wrap_model = wrap_model
