"""Building the optimizer wrapper(s) and the parameter schedulers of a run, and scaling the
learning rate to the batch size (``auto_scale_lr``)."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from torch import nn
from torch.optim import Optimizer

from treadle.runner.optim import OptimWrapper, OptimWrapperDict, _ParamScheduler
from treadle.runner.optim import build_optim_wrapper as build_from_cfg
from treadle.runner.registry import OPTIM_WRAPPERS, PARAM_SCHEDULERS

from .cfg_args import as_cfg, as_cfg_items, is_cfg
from .errors import RunnerConfigKeyError, RunnerTypeError

Schedulers = list[_ParamScheduler] | dict[str, list[_ParamScheduler]]


def build_optim_wrapper(model: nn.Module, optim_wrapper: Any) -> OptimWrapper:
    """An OptimWrapper (or OptimWrapperDict) from a built one, a config, or a dict of built
    wrappers.

    A config with ``optimizer`` (a config or a built torch optimizer) or ``constructor`` is
    built by its constructor (default DefaultOptimWrapperConstructor); a config with neither
    must map names to built wrappers (several optimizers without a constructor).

    Example:
        >>> wrapper = build_optim_wrapper(nn.Linear(2, 1), dict(optimizer=dict(type='SGD', lr=0.1)))
        >>> type(wrapper).__name__
        'OptimWrapper'
    """
    if isinstance(optim_wrapper, OptimWrapper):
        return optim_wrapper
    if not is_cfg(optim_wrapper):
        raise TypeError(
            f"optim_wrapper: the optimizer wrapper should be an OptimWrapper or a config dict, "
            f"got {type(optim_wrapper).__name__}: {optim_wrapper!r}"
        )
    # A shallow copy: a built optimizer or wrapper in it is the one used (as in MMEngine).
    cfg = dict(optim_wrapper)
    optimizer = cfg.get("optimizer")
    if isinstance(optimizer, Optimizer):
        cfg.setdefault("type", "OptimWrapper")
        return OPTIM_WRAPPERS.build(cfg)
    if optimizer is not None or "constructor" in cfg:
        return build_from_cfg(model, copy.deepcopy(cfg))
    not_built = [name for name, value in cfg.items() if not isinstance(value, OptimWrapper)]
    if not cfg or not_built:
        raise ValueError(
            "optim_wrapper has no 'optimizer' and no 'constructor': it must then map names to "
            f"built OptimWrapper objects (several optimizers), but {not_built or 'it is empty'} "
            "are not (in MMEngine's words, each item mush be an optimizer object); add "
            "optimizer=dict(type=...) for one optimizer, or a constructor that builds several"
        )
    return OptimWrapperDict(**cfg)


def scale_lr(
    optim_wrapper: OptimWrapper,
    auto_scale_lr: Mapping[str, Any] | None,
    batch_size: int,
    world_size: int,
    log: Callable[[str], None],
) -> float | None:
    """Multiply every learning rate by ``world_size * batch_size / base_batch_size`` when
    ``auto_scale_lr.enable`` (the linear scaling rule); returns the ratio, or None.

    Example:
        >>> import torch
        >>> wrapper = OptimWrapper(torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1))
        >>> cfg = dict(enable=True, base_batch_size=16)
        >>> scale_lr(wrapper, cfg, 8, 4, print)  # doctest: +ELLIPSIS
        LR is set based on batch size of 16 and the current batch size is 32. Scaling the ...
        2.0
    """
    if not auto_scale_lr or not auto_scale_lr.get("enable", False):
        return None
    if "base_batch_size" not in auto_scale_lr:
        raise RunnerConfigKeyError(
            "auto_scale_lr.enable is True but auto_scale_lr has no 'base_batch_size' (the "
            "total batch size its learning rates are meant for)"
        )
    real = world_size * batch_size
    base = auto_scale_lr["base_batch_size"]
    ratio = float(real) / float(base)
    log(
        f"LR is set based on batch size of {base} and the current batch size is {real}. "
        f"Scaling the original LR by {ratio}."
    )
    wrappers = (
        list(optim_wrapper.values())
        if isinstance(optim_wrapper, OptimWrapperDict)
        else [optim_wrapper]
    )
    for wrapper in wrappers:
        for group in wrapper.optimizer.param_groups:
            group["lr"] = group["lr"] * ratio
            # Schedulers read their starting point from initial_lr once built.
            if "initial_lr" in group:
                group["initial_lr"] = group["initial_lr"] * ratio
    return ratio


def schedulers_are_built(schedulers: Any) -> bool:
    """Whether ``schedulers`` (a config, a list, a dict per optimizer) holds a built one."""
    if isinstance(schedulers, _ParamScheduler):
        return True
    if isinstance(schedulers, Mapping):
        return "type" not in schedulers and any(map(schedulers_are_built, schedulers.values()))
    if isinstance(schedulers, (list, tuple)):
        return any(map(schedulers_are_built, schedulers))
    return False


def check_scheduler_cfg(param_scheduler: Any) -> None:
    """Refuse a ``param_scheduler`` that is none of: a scheduler or its config, a list of them,
    or a dict of those per optimizer name.

    Example:
        >>> check_scheduler_cfg([dict(type='MultiStepLR', milestones=[1])])
        >>> check_scheduler_cfg([dict(milestones=[1])])  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        treadle.runner.runner.errors.RunnerConfigKeyError: param_scheduler[0] has no 'type' ...
    """
    param_scheduler = as_cfg_items(param_scheduler)
    if param_scheduler is None or isinstance(param_scheduler, _ParamScheduler):
        return
    if isinstance(param_scheduler, (list, tuple)):
        for index, item in enumerate(param_scheduler):
            _check_one(item, f"param_scheduler[{index}]")
        return
    if isinstance(param_scheduler, Mapping):
        if "type" in param_scheduler:
            return
        for name, value in param_scheduler.items():
            value = as_cfg_items(value)
            if isinstance(value, (list, tuple)):
                for index, item in enumerate(value):
                    _check_one(item, f"param_scheduler[{name!r}][{index}]")
            elif isinstance(value, (Mapping, _ParamScheduler)):
                _check_one(value, f"param_scheduler[{name!r}]")
            else:
                raise RunnerTypeError(
                    f"Each value of `param_scheduler` should be a dict or a list when it maps "
                    f"optimizer names to their schedulers: param_scheduler[{name!r}] is a "
                    f"{type(value).__name__} ({value!r}); give a scheduler, its config or a "
                    f"list of them"
                )
        return
    raise TypeError(
        "`param_scheduler` should be a scheduler or its config, a list of them, or a dict of "
        f"those per optimizer name, got {type(param_scheduler).__name__}: {param_scheduler!r}"
    )


def _check_one(item: Any, where: str) -> None:
    if isinstance(item, _ParamScheduler):
        return
    if not isinstance(item, Mapping):
        raise TypeError(
            f"{where} should be a scheduler or a config dict, got {type(item).__name__}: {item!r}"
        )
    if "type" not in item:
        raise RunnerConfigKeyError(
            f"{where} has no 'type' (each parameter scheduler should contain the key type): "
            f"{dict(item)!r}"
        )


def build_schedulers_for(
    schedulers: Any,
    optim_wrapper: OptimWrapper,
    default_end: Callable[[bool], int | None],
    epoch_length: int | None,
) -> list[_ParamScheduler]:
    """The schedulers of one optimizer wrapper; configs without ``end`` end with the run
    (``default_end(by_epoch)``: max epochs or max iterations)."""
    schedulers = as_cfg_items(schedulers)
    items: Sequence[Any] = schedulers if isinstance(schedulers, (list, tuple)) else [schedulers]
    built = []
    for item in items:
        if isinstance(item, _ParamScheduler):
            built.append(item)
            continue
        cfg = copy.deepcopy(dict(item))
        end = default_end(cfg.get("by_epoch", True))
        if end is not None:
            cfg.setdefault("end", end)
        default_args: dict[str, Any] = dict(optimizer=optim_wrapper)
        if epoch_length is not None:
            default_args["epoch_length"] = epoch_length
        built.append(PARAM_SCHEDULERS.build(cfg, default_args=default_args))
    return built


def build_param_schedulers(
    schedulers: Any,
    optim_wrapper: OptimWrapper,
    default_end: Callable[[bool], int | None],
    epoch_length: int | None,
) -> Schedulers:
    """A list of schedulers for one optimizer wrapper; for an OptimWrapperDict, a dict of lists
    by optimizer name (a dict config without 'type' gives each optimizer its own)."""
    schedulers = as_cfg(schedulers)
    if not isinstance(optim_wrapper, OptimWrapperDict):
        return build_schedulers_for(schedulers, optim_wrapper, default_end, epoch_length)
    per_name = isinstance(schedulers, Mapping) and "type" not in schedulers
    result: dict[str, list[_ParamScheduler]] = {}
    for name, wrapper in optim_wrapper.items():
        if per_name:
            if name not in schedulers:
                # An optimizer without schedulers keeps its learning rate.
                result[name] = []
                continue
            own = schedulers[name]
        else:
            own = schedulers
        result[name] = build_schedulers_for(own, wrapper, default_end, epoch_length)
    if per_name:
        unknown = sorted(set(schedulers) - set(optim_wrapper.keys()))
        if unknown:
            raise KeyError(
                f"param_scheduler names {unknown}, which are not optimizers of the "
                f"OptimWrapperDict (those are {sorted(optim_wrapper.keys())})"
            )
    return result
