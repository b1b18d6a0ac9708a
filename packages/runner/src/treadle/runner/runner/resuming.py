"""Resuming a runner from a checkpoint, and deciding where to resume from.

``resume_runner`` restores, in this order: the model's weights (after the
``after_load_checkpoint`` hooks), the loop counters, the seed, the message hub, the
optimizer wrapper (with its grad scaler), the parameter schedulers, the state of every hook
that has one, and the train loop's own state (position in the epoch, sampler, random
generators), which it restores last so that nothing draws from a generator after it. Then
it records, beside the new run's scalars, which run it continues (:mod:`.run_history`), so that
their curves are drawn as one history.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from treadle import dist
from treadle.runner.checkpoint import find_latest_checkpoint
from treadle.runner.device import get_device

from .checkpoint_contents import load_message_hub_state, restore_history_buffers
from .checkpoint_loading import load_runner_checkpoint
from .checkpoint_meta import is_remote, read_checkpoint_meta
from .elastic import check_resume_world
from .named_resume import STARTED_FROM, choose_named, named_checkpoint, resolved
from .run_history import record_resumed_run
from .stateful_parts import stateful_hooks, train_dataset
from .strategy_binding import bound_strategy


class LoadPlan(NamedTuple):
    """What ``load_or_resume`` does: ``action`` is 'resume', 'load' (weights only) or None."""

    action: str | None
    path: str | None


class StartPlan(NamedTuple):
    """A LoadPlan and ``origin``: what the run's checkpoints record as where it started from
    (:data:`.named_resume.STARTED_FROM`)."""

    action: str | None
    path: str | None
    origin: str | None


def _inherited_origin(path: str, backend_args: dict | None) -> str | None:
    # A run continued without a named checkpoint belongs to the chain of the one it continues.
    try:
        meta = read_checkpoint_meta(path, backend_args)
    except Exception:  # read again, with a clear error, when it is resumed
        return None
    return None if meta is None else meta.get(STARTED_FROM)


def _decide(
    work_dir: str,
    resume: bool | str,
    load_from: str | None,
    logger: Any,
    fingerprint: str | None,
    backend_args: dict | None,
    out_dir: str | None = None,
) -> StartPlan:
    named = named_checkpoint(resume, load_from)
    if named is not None:
        choice = choose_named(work_dir, named, fingerprint, backend_args)
        logger.info(f"resume: continuing from {choice.path}: {choice.reason}")
        return StartPlan("resume", choice.path, resolved(named))
    if load_from is not None and not is_remote(load_from) and not os.path.exists(load_from):
        raise FileNotFoundError(
            f"load_from={load_from!r}: no such checkpoint file (local path; resume={resume})"
        )
    if not resume:
        if load_from is None:
            return StartPlan(None, None, None)
        return StartPlan("load", load_from, resolved(load_from))
    latest = find_latest_checkpoint(work_dir, backend_args)
    if latest is None and out_dir is not None:
        # A new work_dir (another machine, a cleaned disk) of a run that saved to a store: its
        # pointer and checkpoints are in the out_dir, read through backend_args.
        logger.info(f"resume: looking for checkpoints in CheckpointHook's out_dir {out_dir}")
        latest = find_latest_checkpoint(out_dir, backend_args)
    if latest is not None:
        logger.info(f"Auto resumed from the latest checkpoint {latest}.")
        return StartPlan("resume", latest, _inherited_origin(latest, backend_args))
    also = "" if out_dir is None else f" nor does CheckpointHook's out_dir {out_dir},"
    logger.warning(
        f"resume=True but work_dir {work_dir} holds no complete checkpoint,{also} and load_from "
        "is not set: training starts from scratch"
    )
    return StartPlan(None, None, None)


def plan_start(
    work_dir: str,
    resume: bool | str,
    load_from: str | None,
    logger: Any,
    fingerprint: str | None = None,
    backend_args: dict | None = None,
    out_dir: str | None = None,
) -> StartPlan:
    """Where a runner starts from, and what its checkpoints record as its origin.

    ``resume=True`` without ``load_from``: the newest complete checkpoint in ``work_dir`` (so
    the same command run again continues an interrupted run), else a fresh start with a
    warning. A named checkpoint (``resume=True`` with ``load_from``, or ``resume=PATH``): that
    one exactly, unless ``work_dir`` holds newer checkpoints of a run that started from it
    with the config of ``fingerprint`` (see :mod:`.named_resume`). ``resume=False``:
    ``load_from`` loads weights only. Rank 0 decides and the others follow. ``backend_args``
    (the CheckpointHook's) describe the store of its out_dir, where it is one. ``out_dir`` (the
    folder the CheckpointHook writes to, when not ``work_dir``): where ``resume=True`` looks
    when ``work_dir`` holds no checkpoint, following the pointer there.

    Example:
        >>> plan = plan_start('work_dirs/toy', True, 'work_dirs/toy/epoch_1.pth', logger, 'a1b2')
        >>> plan.action, plan.path
        ('resume', 'work_dirs/toy/epoch_1.pth')
    """
    plan = [None]
    if dist.get_rank() == 0:
        plan[0] = tuple(
            _decide(work_dir, resume, load_from, logger, fingerprint, backend_args, out_dir)
        )
    if dist.get_world_size() > 1:
        dist.broadcast_object_list(plan, src=0)
    return StartPlan(*plan[0])


def plan_load_or_resume(
    work_dir: str, resume: bool | str, load_from: str | None, logger: Any
) -> LoadPlan:
    """:func:`plan_start` without a config to recognise a requeued run by, so a named
    checkpoint is always resumed exactly.

    Example:
        >>> plan_load_or_resume('work_dirs/toy', resume=True, load_from=None, logger=logger)
        LoadPlan(action='resume', path='work_dirs/toy/epoch_2.pth')
    """
    return LoadPlan(*plan_start(work_dir, resume, load_from, logger)[:2])


def _restore_counters(runner: Any, meta: Mapping[str, Any]) -> None:
    # MMEngine's loops keep the counters in _epoch/_iter; a loop that has state_dict() gets
    # its whole state later.
    loop = runner.train_loop
    for name in ("epoch", "iter"):
        if name in meta and hasattr(loop, f"_{name}"):
            setattr(loop, f"_{name}", meta[name])


def _restore_seed(runner: Any, meta: Mapping[str, Any]) -> None:
    resumed_seed = meta.get("seed")
    randomness = getattr(runner, "_randomness_cfg", None)
    if resumed_seed is None or randomness is None:
        return
    current_seed = randomness.get("seed")
    if resumed_seed == current_seed:
        return
    if current_seed is not None:
        runner.logger.warning(
            f'The value of random seed in the checkpoint "{resumed_seed}" is different from '
            f'the value in `randomness` config "{current_seed}"'
        )
    randomness.update(seed=resumed_seed)
    set_randomness = getattr(runner, "set_randomness", None)
    if callable(set_randomness):
        set_randomness(**randomness)


def _same(first: Any, second: Any) -> bool:
    try:
        return bool(first == second)
    except Exception:  # numpy arrays and other values without a plain ==
        return repr(first) == repr(second)


def _check_dataset_meta(runner: Any, meta: Mapping[str, Any]) -> None:
    saved = meta.get("dataset_meta")
    current = getattr(train_dataset(runner), "metainfo", None)
    if not _same(saved, current):
        runner.logger.warning(
            "The dataset metainfo from the resumed checkpoint is different from the current "
            "training dataset, please check the correctness of the checkpoint or the training "
            "dataset."
        )


def _restore_optimizer(runner: Any, state: Any) -> None:
    wrapper = runner.optim_wrapper
    if not callable(getattr(wrapper, "load_state_dict", None)):
        runner.optim_wrapper = runner.build_optim_wrapper(wrapper)
    bound_strategy(runner).load_optim_state_dict(state)


def _built_schedulers(runner: Any) -> Any:
    schedulers = runner.param_schedulers
    groups = schedulers.values() if isinstance(schedulers, Mapping) else [schedulers]
    if all(callable(getattr(s, "load_state_dict", None)) for g in groups for s in g):
        return schedulers
    runner.param_schedulers = runner.build_param_scheduler(schedulers)
    return runner.param_schedulers


def _restore_schedulers(runner: Any, states: Any) -> None:
    _built_schedulers(runner)
    bound_strategy(runner).load_scheduler_state_dict(states)


def _restore_hooks(runner: Any, states: Mapping[str, Any]) -> None:
    unused = dict(states)
    for key, hook in stateful_hooks(runner):
        if key in unused:
            hook.load_state_dict(restore_history_buffers(unused.pop(key)))
    if unused:
        runner.logger.warning(
            f"the checkpoint holds the state of hooks this run does not have: "
            f"{', '.join(sorted(unused))}; it is not used"
        )


def resume_runner(
    runner: Any,
    filename: str,
    resume_optimizer: bool = True,
    resume_param_scheduler: bool = True,
    map_location: str | Callable = "default",
) -> None:
    """``Runner.resume``: continue the run saved in ``filename`` (a treadle or MMEngine 0.10
    checkpoint) from the same epoch, iteration and batch.

    Example:
        >>> resume_runner(runner, 'work_dirs/toy/iter_40.pth')
        >>> runner.iter
        40
    """
    if map_location == "default":
        map_location = get_device()
    checkpoint = load_runner_checkpoint(runner, filename, map_location=map_location)
    meta = checkpoint.get("meta")
    if not isinstance(meta, Mapping) or "epoch" not in meta or "iter" not in meta:
        raise KeyError(
            f"{filename} is not a checkpoint a runner can resume from: its 'meta' has no epoch "
            f"and iter (the checkpoint holds {', '.join(map(repr, checkpoint))}). To take its "
            f"weights only, use load_from={filename!r} with resume=False"
        )
    check_resume_world(runner, checkpoint, filename)
    _restore_counters(runner, meta)
    _restore_seed(runner, meta)
    _check_dataset_meta(runner, meta)
    if "message_hub" in checkpoint:
        load_message_hub_state(runner.message_hub, checkpoint["message_hub"])
    if "optimizer" in checkpoint and resume_optimizer:
        _restore_optimizer(runner, checkpoint["optimizer"])
    if resume_param_scheduler and runner.param_schedulers is None:
        runner.logger.warning(
            "`resume_param_scheduler` is True but `self.param_schedulers` is None, so skip "
            "resuming parameter schedulers"
        )
        resume_param_scheduler = False
    if "param_schedulers" in checkpoint and resume_param_scheduler:
        _restore_schedulers(runner, checkpoint["param_schedulers"])
    if "hooks" in checkpoint:
        _restore_hooks(runner, checkpoint["hooks"])
    loop = runner.train_loop
    if "loop" in checkpoint and callable(getattr(loop, "load_state_dict", None)):
        loop.load_state_dict(checkpoint["loop"])
    runner._has_loaded = True
    runner.logger.info(f"resumed epoch: {runner.epoch}, iter: {runner.iter}")
    # The curves of this run continue those of the run that saved the checkpoint.
    record_resumed_run(runner, filename, meta)
