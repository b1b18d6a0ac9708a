"""``EMAHook``: keeps an averaged copy of the model and evaluates and saves with it."""

from __future__ import annotations

import copy
import logging
from typing import Any

import torch

from treadle.logging import print_log

from ..checkpoint.host_copy import wait_for_host_copy
from ..checkpoint.state import load_state_dict
from ..model.wrappers.utils import unwrap_model
from ..registry import HOOKS, MODELS
from .hook import DATA_BATCH, Hook


def _check_begin(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"EMAHook: {name} must be an int >= 0, got {value!r}")
    return value


@HOOKS.register_module()
class EMAHook(Hook):
    """Keeps an exponential moving average (or any averaged model of ``MODELS``) of the model's
    weights, updated after each training iteration, and swaps it in for validation, testing and
    the ``state_dict`` of saved checkpoints.

    A checkpoint holds the averaged weights as ``state_dict`` (so loading it for inference gives
    the averaged model) and the trained weights under ``ema_state_dict`` with a ``module.``
    prefix, as MMEngine's; resuming swaps them back. Loading a checkpoint without
    ``ema_state_dict`` starts the average from its weights.

    Args:
        ema_type: the averaged model's type in ``MODELS`` ('ExponentialMovingAverage',
            'MomentumAnnealingEMA', 'StochasticWeightAverage' or your own).
        strict_load: load the averaged weights strictly.
        begin_iter: start averaging at this iteration; before it the average follows the
            model exactly.
        begin_epoch: start averaging at this epoch (not with ``begin_iter``).
        **kwargs: the averaged model's arguments (``momentum``, ``interval``,
            ``update_buffers``...).

    Example:
        >>> runner_cfg = dict(custom_hooks=[
        ...     dict(type='EMAHook', momentum=0.001, begin_iter=100)])
    """

    priority = "NORMAL"

    def __init__(
        self,
        ema_type: str = "ExponentialMovingAverage",
        strict_load: bool = False,
        begin_iter: int = 0,
        begin_epoch: int = 0,
        **kwargs: Any,
    ) -> None:
        self.strict_load = strict_load
        self.ema_cfg = dict(type=ema_type, **kwargs)
        self.begin_iter = _check_begin("begin_iter", begin_iter)
        self.begin_epoch = _check_begin("begin_epoch", begin_epoch)
        if begin_iter and begin_epoch:
            raise ValueError(
                f"EMAHook: set begin_iter or begin_epoch, not both (got begin_iter={begin_iter} "
                f"and begin_epoch={begin_epoch})"
            )
        self.enabled_by_epoch = self.begin_epoch > 0

    def before_run(self, runner: Any) -> None:
        model = runner.model
        self.src_model = unwrap_model(model)
        self.ema_model = MODELS.build(self.ema_cfg, default_args=dict(model=self.src_model))
        # Whether the averaged weights were loaded from a checkpoint since the last training
        # iteration: they are then the average to evaluate and save, whatever its step count.
        self._loaded = False

    def before_train(self, runner: Any) -> None:
        if self.enabled_by_epoch and self.begin_epoch > runner.max_epochs:
            raise ValueError(
                f"EMAHook: begin_epoch={self.begin_epoch} is after the last epoch "
                f"(max_epochs={runner.max_epochs})"
            )
        if not self.enabled_by_epoch and self.begin_iter > runner.max_iters:
            raise ValueError(
                f"EMAHook: begin_iter={self.begin_iter} is after the last iteration "
                f"(max_iters={runner.max_iters})"
            )

    def _ema_started(self, runner: Any) -> bool:
        if self.enabled_by_epoch:
            return runner.epoch + 1 >= self.begin_epoch
        return runner.iter + 1 >= self.begin_iter

    def _follows_source(self) -> bool:
        """Whether the average is still the model itself: never updated, and not loaded from
        a checkpoint since the last training iteration (a loaded state may hold no step count,
        or 0, and still be the average to use, as in MMEngine)."""
        if self.__dict__.get("_loaded", False):
            return False
        host_steps = getattr(self.ema_model, "_host_steps", None)
        return (int(self.ema_model.steps) if host_steps is None else host_steps) == 0

    @torch.no_grad()
    def _follow_source(self) -> None:
        """Before averaging starts the average is the model itself. MMEngine copies every
        weight after every iteration to keep it so; here the copy is made only when the
        average is about to be read (evaluation, saving), which gives the same results."""
        if self._follows_source():
            own = self.ema_model.module.state_dict()
            for name, value in self.src_model.state_dict().items():
                if name in own:
                    own[name].copy_(value)

    def after_train_iter(
        self,
        runner: Any,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: dict | None = None,
    ) -> None:
        # From here on the average is the model's again until the first update (MMEngine
        # copies the weights at each iteration before averaging starts).
        self._loaded = False
        if self._ema_started(runner):
            # An asynchronous save may still be copying the averaged weights (with gradient
            # accumulation no optimizer step waited for it in this iteration).
            wait_for_host_copy(runner)
            self.ema_model.update_parameters(self.src_model)

    def background_copy_tensors(self) -> list[torch.Tensor]:
        """The averaged weights, for an asynchronous save to copy in the background: they
        change only in ``after_train_iter``, at a save and in evaluation, each of which waits
        for that copy first."""
        return [tensor.detach() for tensor in self._tensors(self.ema_model.module)]

    def _tensors(self, model: torch.nn.Module) -> list[torch.Tensor]:
        if self.ema_model.update_buffers:
            return [*model.parameters(), *model.buffers()]
        return list(model.parameters())

    @torch.no_grad()
    def _swap_ema_parameters(self) -> None:
        """Exchange the values of the averaged and the trained weights, in place."""
        self._follow_source()
        averaged = self._tensors(self.ema_model.module)
        trained = self._tensors(self.src_model)
        for avg, src in zip(averaged, trained, strict=True):
            kept = avg.detach().clone()
            avg.copy_(src.detach())
            src.detach().copy_(kept)

    def before_val_epoch(self, runner: Any) -> None:
        self._swap_ema_parameters()

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        self._swap_ema_parameters()

    def before_test_epoch(self, runner: Any) -> None:
        self._swap_ema_parameters()

    def after_test_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        self._swap_ema_parameters()

    def before_save_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        wait_for_host_copy(runner)  # a save right after another (no step between them)
        self._follow_source()
        checkpoint["ema_state_dict"] = self.ema_model.state_dict()
        self._swap_ema_state_dict(checkpoint)

    def after_load_checkpoint(self, runner: Any, checkpoint: dict) -> None:
        # The runner calls this before loading `state_dict` into the model, so swapping here
        # makes the model get the trained weights back.
        resuming = bool(getattr(runner, "_resume", False))
        self._loaded = True
        if "ema_state_dict" in checkpoint and resuming:
            self._swap_ema_state_dict(checkpoint)
            self.ema_model.load_state_dict(checkpoint["ema_state_dict"], strict=self.strict_load)
            return
        if resuming:
            print_log(
                "EMAHook: the checkpoint has no 'ema_state_dict'; the average starts from its "
                "'state_dict'",
                logger="current",
                level=logging.WARNING,
            )
        load_state_dict(
            self.ema_model.module, copy.deepcopy(checkpoint["state_dict"]), strict=self.strict_load
        )

    @staticmethod
    def _swap_ema_state_dict(checkpoint: dict) -> None:
        """Exchange ``state_dict[k]`` and ``ema_state_dict['module.' + k]`` in ``checkpoint``."""
        model_state = checkpoint["state_dict"]
        ema_state = checkpoint["ema_state_dict"]
        for key in ema_state:
            if key.startswith("module."):
                name = key[len("module.") :]
                if name in model_state:
                    ema_state[key], model_state[name] = model_state[name], ema_state[key]
