"""wait_for_host_copy: what changes saved weights outside an optimizer step waits for first.

An asynchronous save copies the weights to host memory in the background while training goes
on (see :mod:`treadle.runner.checkpoint.async_writer`); the optimizers' next step waits for that
copy by itself. Anything else that changes those weights in place (validation with EMAHook's
swap, EMAHook's update) calls this first. It lives here, beside the writer, so that hooks can
call it without importing the strategies. ``hook_tensors`` gathers the tensors hooks offer to
that copy (those they change only after waiting for it).
"""

from __future__ import annotations

from typing import Any

import torch


def wait_for_host_copy(runner: Any) -> None:
    """Block until the asynchronous save in flight (if any) has copied the weights it reads:
    called before anything that changes them outside an optimizer step, such as validation
    (EMAHook swaps the averaged weights in, in place)."""
    strategy = getattr(runner, "strategy", None)
    wait = getattr(getattr(strategy, "checkpoint_io", None), "wait_for_snapshot", None)
    if wait is not None:
        wait()


def hook_tensors(runner: Any) -> list[torch.Tensor]:
    """The tensors the runner's hooks let an asynchronous save copy in the background: those a
    hook changes only after :func:`wait_for_host_copy` (a hook offers them with a
    ``background_copy_tensors()`` method; EMAHook's averaged weights).

    Example:
        >>> hook_tensors(runner)  # with EMAHook: the averaged model's weights  # doctest: +SKIP
        [tensor(...), ...]
    """
    tensors: list[torch.Tensor] = []
    for hook in getattr(runner, "hooks", ()):
        offered = getattr(hook, "background_copy_tensors", None)
        if callable(offered):
            tensors.extend(offered())
    return tensors
