"""The runner's arguments from a whole config, the checks of them that fail before anything is
built, and the run's name."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Mapping
from typing import Any

from treadle.config import Config
from treadle.logging import MessageHub, MMLogger

_GROUPS = {
    "training": ("train_dataloader", "train_cfg", "optim_wrapper"),
    "validation": ("val_dataloader", "val_cfg", "val_evaluator"),
    "testing": ("test_dataloader", "test_cfg", "test_evaluator"),
}


def check_groups(**arguments: Any) -> None:
    """Refuse a half-configured stage: training, validation and testing each need their three
    arguments together (or none of them).

    Example:
        >>> check_groups(val_dataloader=dict(), val_cfg=dict())  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: val_dataloader, val_cfg and val_evaluator should be either all None or not ...
    """
    for stage, names in _GROUPS.items():
        given = [name for name in names if arguments.get(name) is not None]
        if given and len(given) != len(names):
            missing = [name for name in names if name not in given]
            raise ValueError(
                f"{', '.join(names[:-1])} and {names[-1]} should be either all None or not "
                f"None: {stage} needs them together, and {' and '.join(given)} "
                f"{'is' if len(given) == 1 else 'are'} set but {' and '.join(missing)} "
                f"{'is' if len(missing) == 1 else 'are'} not"
            )


def check_train_cfg(train_cfg: Any) -> None:
    """Refuse a ``train_cfg`` for a built-in loop that does not say how long to train.

    Example:
        >>> check_train_cfg(dict(by_epoch=True, val_interval=1))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        KeyError: "train_cfg has no 'max_epochs': an epoch-based train loop (by_epoch=True) ...
    """
    if not isinstance(train_cfg, (Mapping, Config)) or "type" in train_cfg:
        return
    if "by_epoch" not in train_cfg:
        if "max_epochs" not in train_cfg and "max_iters" not in train_cfg:
            raise KeyError(
                "train_cfg has neither 'max_epochs' nor 'max_iters': say how long to train, "
                "train_cfg=dict(by_epoch=True, max_epochs=N) or dict(by_epoch=False, "
                "max_iters=N)"
            )
        return
    if train_cfg["by_epoch"]:
        if "max_epochs" not in train_cfg:
            raise KeyError(
                "train_cfg has no 'max_epochs': an epoch-based train loop (by_epoch=True) needs "
                "train_cfg=dict(by_epoch=True, max_epochs=N)"
            )
    elif "max_iters" not in train_cfg:
        raise KeyError(
            "train_cfg has no 'max_iters': an iteration-based train loop (by_epoch=False) "
            "needs train_cfg=dict(by_epoch=False, max_iters=N)"
        )


def _names_in_use() -> set[str]:
    # A run's logger, message hub and visualizer share its name: a name any of them holds is
    # taken (a test that clears the loggers between runs still leaves the others).
    names = set(MMLogger._instance_dict) | set(MessageHub._instance_dict)
    visual = sys.modules.get("treadle.visual")
    if visual is not None:
        names |= set(visual.Visualizer._instance_dict)
    return names


def experiment_name_for(name: str | None, cfg_filename: str | None, timestamp: str) -> str:
    """MMEngine's run name (``{name}_{timestamp}``, ``{config stem}_{timestamp}`` or the
    timestamp), made unique in the process: the logger, message hub and visualizer are shared
    by name, and a second run started within the same second must not write into the first
    one's log file.

    Example:
        >>> experiment_name_for('toy', None, '20240101_000000')
        'toy_20240101_000000'
    """
    if name is not None:
        base = f"{name}_{timestamp}"
    elif cfg_filename is not None:
        stem = cfg_filename.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
        base = f"{stem}_{timestamp}"
    else:
        base = timestamp
    taken = _names_in_use()
    if base not in taken:
        return base
    count = 1
    while f"{base}_{count}" in taken:
        count += 1
    return f"{base}_{count}"


def runner_arguments(cfg: Config | Mapping[str, Any]) -> dict[str, Any]:
    """The Runner's constructor arguments (all but ``cfg``) that a whole config gives, with
    MMEngine's defaults for the keys it leaves out. ``elastic`` (treadle's own) is among them
    only when the config sets it, so a Runner subclass whose constructor has MMEngine's
    parameters builds from any config that does not use it.

    Example:
        >>> sorted(runner_arguments(dict(model=dict(type='M'), work_dir='w')))[:3]
        ['auto_scale_lr', 'custom_hooks', 'data_preprocessor']
        >>> 'elastic' in runner_arguments(dict(model=dict(type='M'), work_dir='w'))
        False
    """
    arguments = dict(
        model=cfg.get("model"),
        work_dir=cfg.get("work_dir"),
        train_dataloader=cfg.get("train_dataloader"),
        val_dataloader=cfg.get("val_dataloader"),
        test_dataloader=cfg.get("test_dataloader"),
        train_cfg=cfg.get("train_cfg"),
        val_cfg=cfg.get("val_cfg"),
        test_cfg=cfg.get("test_cfg"),
        auto_scale_lr=cfg.get("auto_scale_lr"),
        optim_wrapper=cfg.get("optim_wrapper"),
        param_scheduler=cfg.get("param_scheduler"),
        val_evaluator=cfg.get("val_evaluator"),
        test_evaluator=cfg.get("test_evaluator"),
        default_hooks=cfg.get("default_hooks"),
        custom_hooks=cfg.get("custom_hooks"),
        data_preprocessor=cfg.get("data_preprocessor"),
        load_from=cfg.get("load_from"),
        resume=cfg.get("resume", False),
        launcher=cfg.get("launcher", "none"),
        # No backend named: the one of the device in use (nccl on CUDA, gloo on the CPU...).
        env_cfg=cfg.get("env_cfg", dict(dist_cfg=dict())),
        log_processor=cfg.get("log_processor"),
        log_level=cfg.get("log_level", "INFO"),
        visualizer=cfg.get("visualizer"),
        default_scope=cfg.get("default_scope", "treadle"),
        randomness=cfg.get("randomness", dict(seed=None)),
        experiment_name=cfg.get("experiment_name"),
    )
    if cfg.get("elastic") is not None:
        arguments["elastic"] = cfg.get("elastic")
    return arguments


def check_elastic_argument(runner_cls: type, arguments: Mapping[str, Any]) -> None:
    """Refuse, naming the class, a config that sets ``elastic`` for a runner class whose
    constructor takes no ``elastic`` (a subclass written with MMEngine's parameters), rather
    than fail with Python's "unexpected keyword argument".

    Example:
        >>> check_elastic_argument(Runner, dict(elastic=dict(global_batch_size=8)))
    """
    if "elastic" not in arguments:
        return
    try:
        parameters = inspect.signature(runner_cls.__init__).parameters
    except (TypeError, ValueError):
        return
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    if "elastic" in parameters or takes_any:
        return
    raise TypeError(
        f"the config sets elastic={arguments['elastic']!r}, but {runner_cls.__qualname__}"
        f".__init__() got an unexpected keyword argument 'elastic': it has no such parameter "
        f"(its parameters are MMEngine's). Add `elastic: dict | None = None` to it and pass it "
        f"on to super().__init__(..., elastic=elastic), or remove elastic from the config"
    )
