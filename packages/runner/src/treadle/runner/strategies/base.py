"""BaseStrategy: how a model and its optimizer are placed, synchronized and saved.

The Runner talks to one strategy whatever the hardware: it asks it to set up the process
environment, to prepare the model (and optimizer wrapper and schedulers) together, for a
context that skips gradient synchronization while gradients accumulate, and to save and load a
dict of *Statefuls* (anything with ``state_dict()`` / ``load_state_dict()``). Single device and
DDP share :class:`~.single_device.SingleDeviceStrategy`; FSDP and DeepSpeed add their own.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping
from typing import Any

import torch
from torch import nn

from treadle import dist
from treadle.logging import print_log
from treadle.runner.checkpoint import _load_checkpoint, save_checkpoint


def _is_stateful(value: Any) -> bool:
    return callable(getattr(value, "state_dict", None)) and callable(
        getattr(value, "load_state_dict", None)
    )


class BaseStrategy:
    """The interface every strategy implements; the environment, no-sync and save/load parts
    are shared.

    Args:
        dist_cfg: keyword arguments of :func:`treadle.dist.init_dist` (``backend``, ...).

    Example:
        >>> strategy = SingleDeviceStrategy()
        >>> strategy.setup_env()
        >>> model, optim_wrapper = strategy.prepare(model, optim_wrapper=optim_wrapper)
        >>> strategy.save({'model': model, 'optimizer': optim_wrapper}, 'work_dirs/a.pth')
        >>> strategy.load({'model': model, 'optimizer': optim_wrapper}, 'work_dirs/a.pth')
        []
    """

    def __init__(self, *, dist_cfg: dict | None = None) -> None:
        self.dist_cfg = dict(dist_cfg or {})
        self.launcher = "none"
        self.model: nn.Module | None = None
        self.optim_wrapper: Any = None
        self.param_schedulers: Any = None

    # -- environment --------------------------------------------------------------------
    @property
    def distributed(self) -> bool:
        return dist.is_distributed()

    @property
    def world_size(self) -> int:
        return dist.get_world_size()

    @property
    def rank(self) -> int:
        return dist.get_rank()

    def setup_env(
        self,
        launcher: str = "none",
        cudnn_benchmark: bool = False,
        dist_cfg: dict | None = None,
    ) -> None:
        """Start the process group for ``launcher`` ('none', 'pytorch', 'slurm', 'mpi')
        unless one exists, and set cuDNN's benchmark mode."""
        self.launcher = launcher
        if dist_cfg is not None:
            self.dist_cfg.update(dist_cfg)
        if launcher != "none" and not dist.is_distributed():
            dist.init_dist(launcher, **self.dist_cfg)
        if cudnn_benchmark:
            torch.backends.cudnn.benchmark = True

    # -- model and optimizer ------------------------------------------------------------
    def prepare(
        self,
        model: nn.Module,
        *,
        optim_wrapper: Any = None,
        param_scheduler: Any = None,
    ) -> Any:
        """Place ``model`` (and wrap it for distributed training); return it alone, or
        ``(model, optim_wrapper)``, or ``(model, optim_wrapper, param_scheduler)`` as given,
        like MMEngine's strategies."""
        self.model = self.wrap_model(model)
        self.optim_wrapper = optim_wrapper
        self.param_schedulers = param_scheduler
        if optim_wrapper is None:
            return self.model
        if param_scheduler is None:
            return self.model, optim_wrapper
        return self.model, optim_wrapper, param_scheduler

    def wrap_model(self, model: nn.Module) -> nn.Module:
        """``model`` placed on its device(s) and wrapped as this strategy trains it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement wrap_model")

    @contextlib.contextmanager
    def no_sync(self, model: nn.Module | None = None) -> Iterator[None]:
        """Inside the block, backward passes do not synchronize gradients across processes
        (gradient accumulation); a model without ``no_sync`` synchronizes nothing anyway."""
        model = self.model if model is None else model
        no_sync = getattr(model, "no_sync", None)
        with no_sync() if callable(no_sync) else contextlib.nullcontext():
            yield

    # -- checkpoints --------------------------------------------------------------------
    def state_dict_of(self, states: Mapping[str, Any]) -> dict[str, Any]:
        """``{key: value.state_dict()}`` for Statefuls, other values as they are."""
        return {
            key: value.state_dict() if _is_stateful(value) else value
            for key, value in states.items()
        }

    def save(
        self, states: Mapping[str, Any], filepath: str, backend_args: dict | None = None
    ) -> None:
        """Write the state of every entry of ``states`` to ``filepath`` (rank 0 writes; the
        file appears whole or not at all)."""
        checkpoint = self.state_dict_of(states)
        if self.rank == 0:
            save_checkpoint(checkpoint, filepath, backend_args=backend_args)

    def load(
        self,
        states: Mapping[str, Any],
        filepath: str,
        map_location: Any = "cpu",
        strict: bool = False,
    ) -> list[str]:
        """Load ``filepath`` into the Statefuls of ``states``; return the checkpoint's keys
        that no entry took. An entry the checkpoint lacks is an error with ``strict``, else a
        warning."""
        checkpoint = _load_checkpoint(filepath, map_location=map_location)
        if not isinstance(checkpoint, Mapping):
            raise TypeError(f"{filepath} holds a {type(checkpoint).__name__}, not a dict of states")
        missing = [key for key in states if key not in checkpoint]
        if missing:
            message = (
                f"{filepath} has no state for {', '.join(map(repr, missing))} (it holds "
                f"{', '.join(map(repr, checkpoint))})"
            )
            if strict:
                raise KeyError(message)
            print_log(message, logger="current", level=logging.WARNING)
        for key, value in states.items():
            if key in checkpoint and _is_stateful(value):
                value.load_state_dict(checkpoint[key])
        return [key for key in checkpoint if key not in states]
