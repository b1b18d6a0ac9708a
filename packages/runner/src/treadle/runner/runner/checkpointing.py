"""What Runner.save_checkpoint, Runner.resume and Runner.load_checkpoint do.

A runner checkpoint holds MMEngine's keys (``meta``, ``state_dict``, ``optimizer``,
``param_schedulers``, ``message_hub``) and, beside them, treadle's ``loop`` (the train loop's
position, sampler state and random generators) and ``hooks`` (``{hook class name: state}`` for
hooks that have one). Everything in it loads with ``weights_only=True``; checkpoints written by
MMEngine 0.10 load too (see :mod:`.mmengine_migration`).

The functions take the runner as their first argument and use only its public surface
(``model``, ``optim_wrapper``, ``param_schedulers``, ``message_hub``, ``train_loop``,
``hooks``, ``call_hook``, ``logger``...), so they are tested with any object that has it.
Model, optimizer and scheduler states, and the file itself, go through ``runner.strategy``
(:mod:`.strategy_binding`): the same code writes one file or a sharded checkpoint.
"""

from __future__ import annotations

import os
import time
from typing import Any

from treadle import dist, fileio
from treadle.runner.checkpoint import tensors_to_cpu
from treadle.runner.checkpoint.host_copy import hook_tensors
from treadle.runner.model import unwrap_model

from ..checkpoint.run_store import checkpoint_backend_args, checkpoint_out_dir
from .checkpoint_contents import message_hub_state, sanitize
from .checkpoint_loading import load_runner_checkpoint, read_runner_checkpoint
from .named_resume import CFG_FINGERPRINT, STARTED_FROM
from .resuming import plan_load_or_resume, plan_start, resume_runner
from .run_history import LOG_DIR_KEY
from .stateful_parts import stateful_hooks, train_dataset
from .strategy_binding import bound_strategy

__all__ = [
    "build_runner_checkpoint",
    "checkpoint_backend_args",
    "checkpoint_out_dir",
    "flush_scalars",
    "load_runner_checkpoint",
    "plan_load_or_resume",
    "plan_start",
    "read_runner_checkpoint",
    "resume_runner",
    "runner_save_checkpoint",
    "save_runner_checkpoint",
]
_TREADLE_VERSION_KEY = "treadle_version"


def _treadle_version() -> str:
    from treadle.runner import __version__

    return __version__


def _local_state(strategy: Any, for_async_save: bool) -> bool:
    # A strategy that gathers or shards its state (FSDP, DeepSpeed...) builds it its own way.
    return for_async_save and not strategy.checkpoint_on_every_rank


def _model_state(strategy: Any, for_async_save: bool) -> Any:
    if _local_state(strategy, for_async_save):
        return unwrap_model(strategy.model).state_dict()
    return strategy.model_state_dict()


def _optim_state(strategy: Any, for_async_save: bool) -> Any:
    if _local_state(strategy, for_async_save) and strategy.optim_wrapper is not None:
        return strategy.optim_wrapper.state_dict()
    return strategy.optim_state_dict()


def build_runner_checkpoint(
    runner: Any,
    save_optimizer: bool = True,
    save_param_scheduler: bool = True,
    meta: dict | None = None,
    *,
    for_async_save: bool = False,
) -> dict[str, Any]:
    """The checkpoint dict of ``runner`` (what :func:`save_runner_checkpoint` writes), after
    the ``before_save_checkpoint`` hooks had their turn. ``for_async_save`` leaves the model's
    and optimizer's tensors where they are (the asynchronous writer copies them to host
    memory in the background) where the strategy reads local state."""
    if meta is None:
        meta = {}
    elif not isinstance(meta, dict):
        raise TypeError(f"meta should be a dict or None, but got {type(meta).__name__}")
    # Runner.save_checkpoint sets them by by_epoch; a direct call saves the current counters.
    meta.setdefault("epoch", runner.epoch)
    meta.setdefault("iter", runner.iter)
    cfg = getattr(runner, "cfg", None)
    meta.update(
        cfg=getattr(cfg, "pretty_text", "") if cfg is not None else "",
        seed=runner.seed,
        experiment_name=runner.experiment_name,
        time=time.strftime("%Y%m%d_%H%M%S", time.localtime()),
        world_size=runner.world_size,
    )
    # Where this chain of runs started and with which config: a named checkpoint resumed
    # again goes on from here only when both match (see .named_resume).
    meta[STARTED_FROM] = getattr(runner, "_started_from", None)
    meta[CFG_FINGERPRINT] = getattr(runner, "_cfg_fingerprint", None)
    # The run's folder: a run resumed from this checkpoint draws its curves after this run's
    # (see .run_history).
    log_dir = getattr(runner, "log_dir", None)
    if isinstance(log_dir, (str, os.PathLike)):
        meta[LOG_DIR_KEY] = os.path.abspath(log_dir)
    meta[_TREADLE_VERSION_KEY] = _treadle_version()
    dataset = train_dataset(runner)
    if hasattr(dataset, "metainfo"):
        meta.update(dataset_meta=dataset.metainfo)
    strategy = bound_strategy(runner)
    checkpoint: dict[str, Any] = {
        "meta": meta,
        "state_dict": _model_state(strategy, for_async_save),
        "message_hub": message_hub_state(runner.message_hub),
    }
    if save_optimizer:
        wrapper = runner.optim_wrapper
        if not callable(getattr(wrapper, "state_dict", None)):
            raise TypeError(
                "save_checkpoint(save_optimizer=True) needs a built optimizer wrapper "
                f"(OptimWrapper or OptimWrapperDict), but runner.optim_wrapper is {wrapper!r}"
            )
        checkpoint["optimizer"] = _optim_state(strategy, for_async_save)
    if save_param_scheduler and runner.param_schedulers is None:
        runner.logger.warning(
            "`save_param_scheduler` is True but `self.param_schedulers` is None, so skip "
            "saving parameter schedulers"
        )
        save_param_scheduler = False
    if save_param_scheduler:
        if strategy.param_schedulers is None:
            raise TypeError(
                "save_checkpoint(save_param_scheduler=True) needs built parameter schedulers, "
                f"but runner.param_schedulers is {runner.param_schedulers!r}"
            )
        checkpoint["param_schedulers"] = strategy.scheduler_state_dict()
    loop = runner.train_loop
    if callable(getattr(loop, "state_dict", None)):
        checkpoint["loop"] = sanitize(tensors_to_cpu(loop.state_dict()), "loop")
    hooks = {key: hook.state_dict() for key, hook in stateful_hooks(runner)}
    hooks = {key: state for key, state in hooks.items() if state}
    if hooks:
        checkpoint["hooks"] = sanitize(tensors_to_cpu(hooks), "hooks")
    runner.call_hook("before_save_checkpoint", checkpoint=checkpoint)
    checkpoint["meta"] = sanitize(checkpoint["meta"], "meta")
    return checkpoint


def save_runner_checkpoint(
    runner: Any,
    filepath: str,
    save_optimizer: bool = True,
    save_param_scheduler: bool = True,
    meta: dict | None = None,
    backend_args: dict | None = None,
    async_save: bool = False,
) -> None:
    """Write the checkpoint of ``runner`` to ``filepath`` (a local path or any treadle.fileio
    URI) through its strategy; every rank calls it. With the base strategies rank 0 builds
    and writes one file (atomically); a sharding strategy has every rank build its part.
    ``async_save`` lets the strategy's CheckpointIO finish the write while training goes on.

    Example:
        >>> save_runner_checkpoint(runner, 'work_dirs/toy/epoch_3.pth')
    """
    strategy = bound_strategy(runner)
    # Every rank's random generators, so that each rank resumes exactly; a collective, so it
    # runs on all ranks (CheckpointHook calls save_checkpoint on every rank).
    per_rank = None
    loop = getattr(runner, "_train_loop", None)
    if dist.get_world_size() > 1 and callable(getattr(loop, "gather_rng_states", None)):
        per_rank = loop.gather_rng_states()
    checkpoint: dict[str, Any] = {}
    if dist.get_rank() == 0 or strategy.checkpoint_on_every_rank:
        checkpoint = build_runner_checkpoint(
            runner, save_optimizer, save_param_scheduler, meta, for_async_save=async_save
        )
        if per_rank is not None and "loop" in checkpoint:
            checkpoint["loop"]["rng_per_rank"] = sanitize(tensors_to_cpu(per_rank), "loop")
    # Hooks' own weights (EMAHook's) go with the model's through the background copy.
    extra = hook_tensors(runner) if async_save and checkpoint else []
    strategy.write_checkpoint(
        checkpoint,
        filepath,
        backend_args=backend_args,
        async_save=async_save,
        **({"also_in_background": extra} if extra else {}),
    )


def runner_save_checkpoint(
    runner: Any,
    out_dir: str,
    filename: str,
    file_client_args: dict | None = None,
    save_optimizer: bool = True,
    save_param_scheduler: bool = True,
    meta: dict | None = None,
    by_epoch: bool = True,
    backend_args: dict | None = None,
    async_save: bool = False,
) -> None:
    """``Runner.save_checkpoint`` with MMEngine's arguments: the file is ``out_dir/filename``;
    ``by_epoch`` decides which of epoch and iter counts the finished step (the hook that saves
    runs before the loop advances its counter)."""
    if meta is None:
        meta = {}
    elif not isinstance(meta, dict):
        raise TypeError(f"meta should be a dict or None, but got {type(meta).__name__}")
    if by_epoch:
        meta.setdefault("epoch", runner.epoch + 1)
        meta.setdefault("iter", runner.iter)
    else:
        meta.setdefault("epoch", runner.epoch)
        meta.setdefault("iter", runner.iter + 1)
    if file_client_args is not None:
        if backend_args is not None:
            raise ValueError(
                '"file_client_args" and "backend_args" cannot be set at the same time.'
            )
        runner.logger.warning(
            '"file_client_args" will be deprecated in future. Please use "backend_args" instead'
        )
        backend_args = file_client_args
    filepath = fileio.join_path(out_dir, filename, backend_args=backend_args)
    flush_scalars(runner)
    save_runner_checkpoint(
        runner, filepath, save_optimizer, save_param_scheduler, meta, backend_args, async_save
    )


def flush_scalars(runner: Any) -> None:
    """Write the scalars the runner's visualizer buffers (``Visualizer.flush``), before a
    checkpoint is saved: a run killed after the checkpoint resumes from it with every iteration
    up to it in its ``scalars.json``, so its history has no gap (the local backend otherwise
    keeps the last seconds in memory). A visualizer without ``flush`` is left alone."""
    flush = getattr(getattr(runner, "visualizer", None), "flush", None)
    if callable(flush):
        flush()
