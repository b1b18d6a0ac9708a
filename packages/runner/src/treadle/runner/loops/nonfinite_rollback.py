"""``train_cfg=dict(nonfinite_loss='rollback')``: on a NaN/inf loss, go back to the last
checkpoint and go on.

What goes back: the model's weights and the optimizer's state (moments, step counts, the grad
scaler), read from the newest complete checkpoint of the work directory. What does not: the
loop's counters and data position, and the learning rates, which keep following the schedule.
The batches trained since that checkpoint are thus dropped, not repeated (repeating them would
meet the same NaN again on a deterministic run): the practice of large runs after a loss
spike. ``max_rollbacks`` bounds how often this may happen in one ``train()``; past it, and when
no checkpoint was saved yet, training stops with :class:`NonFiniteLossError`.

With several processes the loss watch calls the rollback on every rank at once (the ranks agree
on the check first, see :mod:`.rank_agreement`); each rank waits for the others before reading
the checkpoint, so that rank 0's write of it is complete, and every rank loads the same file.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from treadle import dist
from treadle.logging import print_log

from ..checkpoint.latest import find_latest_checkpoint
from ..checkpoint.run_store import checkpoint_backend_args, store_backend_args
from .nonfinite import NonFiniteLossError


def _optimizers(optim_wrapper: Any) -> list[Any]:
    if optim_wrapper is None:
        return []
    if callable(getattr(optim_wrapper, "values", None)):  # OptimWrapperDict
        return [wrapper.optimizer for wrapper in optim_wrapper.values()]
    optimizer = getattr(optim_wrapper, "optimizer", None)
    return [] if optimizer is None else [optimizer]


class Rollback:
    """Called by the loss watch with the error it found: restores the last checkpoint, or
    raises when it cannot.

    Example:
        >>> train_cfg = dict(by_epoch=False, max_iters=1000, nonfinite_loss='rollback',
        ...                  max_rollbacks=3, nonfinite_check_interval=10)
    """

    def __init__(self, loop: Any, max_rollbacks: int = 3) -> None:
        if isinstance(max_rollbacks, bool) or not isinstance(max_rollbacks, int):
            raise TypeError(
                f"train_cfg max_rollbacks must be an int, got {type(max_rollbacks).__name__}: "
                f"{max_rollbacks!r}"
            )
        if max_rollbacks < 1:
            raise ValueError(f"train_cfg max_rollbacks must be >= 1, got {max_rollbacks}")
        self.loop = loop
        self.max_rollbacks = max_rollbacks
        self.count = 0

    def __call__(self, error: NonFiniteLossError) -> None:
        runner = self.loop.runner
        if self.count >= self.max_rollbacks:
            raise self._stop(
                error,
                f"it happened again after {self.count} rollback(s) "
                f"(train_cfg max_rollbacks={self.max_rollbacks})",
            )
        strategy = runner.strategy
        strategy.wait_for_checkpoint()  # an asynchronous save may be the one to go back to
        if dist.get_world_size() > 1:
            # Rank 0 wrote it (possibly asynchronously): read it once every rank is done.
            dist.barrier()
        # CheckpointHook's out_dir may be on a store reached through its backend_args.
        work_dir = os.fspath(runner.work_dir)
        path = find_latest_checkpoint(work_dir, checkpoint_backend_args(runner))
        if path is None:
            raise self._stop(error, f"no checkpoint was saved in {runner.work_dir} yet")
        checkpoint = strategy.read_checkpoint(
            path, map_location="cpu", backend_args=store_backend_args(runner, path)
        )
        strategy.load_model_state_dict(checkpoint["state_dict"], strict=True)
        optim_wrapper = getattr(runner, "optim_wrapper", None)
        if "optimizer" in checkpoint and callable(getattr(optim_wrapper, "load_state_dict", None)):
            # The schedules stay where training is: keep every group's hyperparameters.
            optimizers = _optimizers(optim_wrapper)
            hyper = [
                [{k: v for k, v in g.items() if k != "params"} for g in o.param_groups]
                for o in optimizers
            ]
            strategy.load_optim_state_dict(checkpoint["optimizer"])
            for optimizer, groups in zip(optimizers, hyper, strict=True):
                for group, saved in zip(optimizer.param_groups, groups, strict=True):
                    group.update(saved)
        else:
            print_log(
                f"rollback: {path} holds no optimizer state (CheckpointHook "
                "save_optimizer=False?); only the weights go back",
                logger="current",
                level=logging.WARNING,
            )
        self.count += 1
        iteration = checkpoint.get("meta", {}).get("iter", "?")
        print_log(
            f"{error.args[0]}: rolled back the weights and the optimizer state to {path} "
            f"(iteration {iteration}); the batches since are dropped, the learning rates keep "
            f"their schedule (rollback {self.count} of at most {self.max_rollbacks})",
            logger="current",
            level=logging.WARNING,
        )
        runner.message_hub.update_info("nonfinite_rollbacks", self.count)

    @staticmethod
    def _stop(error: NonFiniteLossError, why: str) -> NonFiniteLossError:
        message = error.args[0].replace("training rolls back to the last checkpoint", "")
        stop = NonFiniteLossError(f"{message}cannot roll back: {why}; training stops")
        stop.iteration, stop.terms = error.iteration, error.terms
        return stop
