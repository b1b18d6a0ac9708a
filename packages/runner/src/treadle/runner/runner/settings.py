"""Checks of the runner's arguments that fail before anything is built, and the run's name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from treadle.logging import MMLogger

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
        ValueError: validation needs val_dataloader, val_cfg and val_evaluator together (or ...
    """
    for stage, names in _GROUPS.items():
        given = [name for name in names if arguments.get(name) is not None]
        if given and len(given) != len(names):
            missing = [name for name in names if name not in given]
            raise ValueError(
                f"{stage} needs {', '.join(names[:-1])} and {names[-1]} together (or none of "
                f"them): {' and '.join(given)} {'is' if len(given) == 1 else 'are'} set but "
                f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not"
            )


def check_train_cfg(train_cfg: Any) -> None:
    """Refuse a ``train_cfg`` for a built-in loop that does not say how long to train.

    Example:
        >>> check_train_cfg(dict(by_epoch=True, val_interval=1))  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        KeyError: "train_cfg has no 'max_epochs': an epoch-based train loop (by_epoch=True) ...
    """
    if not isinstance(train_cfg, Mapping) or "type" in train_cfg:
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
    taken = MMLogger._instance_dict
    if base not in taken:
        return base
    count = 1
    while f"{base}_{count}" in taken:
        count += 1
    return f"{base}_{count}"
