"""Where scalars land when their caller names the global training iteration.

A runner logs training scalars at the iteration and validation results at the epoch (MMEngine's
``scalars.json``). A tracker drawing both against one x axis then shows the validation curve
squeezed at the far left (epoch 3 next to iteration 3000). ``Visualizer.add_scalars(...,
global_step=..., epoch=...)`` sends trackers the iteration instead, and the epoch as a number
of its own; this module works out, once per call, what each kind of backend receives.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

EPOCH_KEY = "epoch"
"""The scalar that carries the epoch in tracker rows (also the log processor's key)."""


@dataclass(frozen=True)
class StepRoutes:
    """What a call of ``add_scalars`` gives each kind of backend.

    Example:
        >>> routes = global_step_routes({'acc': 0.9}, step=2, global_step=400, epoch=2)
        >>> routes.tracker_step, routes.tracker_scalars
        (400, {'acc': 0.9, 'epoch': 2})
        >>> routes.caller_kwargs
        {'global_step': 400}
    """

    tracker_scalars: dict[str, Any]
    tracker_step: int
    tracker_kwargs: dict[str, Any] = field(default_factory=dict)
    caller_kwargs: dict[str, Any] = field(default_factory=dict)


def global_step_routes(
    scalars: dict[str, Any], step: Any, global_step: Any | None, epoch: Any | None
) -> StepRoutes:
    """Trackers: the scalars (with ``epoch``) at ``global_step`` (``step`` when it is None);
    backends that keep the caller's step: ``global_step`` as a keyword."""
    tracker_scalars = dict(scalars)
    tracker_kwargs: dict[str, Any] = {}
    if epoch is not None:
        epoch = _integer("epoch", epoch)
        tracker_scalars.setdefault(EPOCH_KEY, epoch)
        tracker_kwargs[EPOCH_KEY] = epoch
    caller_kwargs: dict[str, Any] = {}
    if global_step is not None:
        global_step = _integer("global_step", global_step)
        caller_kwargs["global_step"] = global_step
    tracker_step = step if global_step is None else global_step
    return StepRoutes(tracker_scalars, tracker_step, tracker_kwargs, caller_kwargs)


def _integer(name: str, value: Any) -> int:
    try:
        return operator.index(value)  # numpy integers and integer tensors too
    except TypeError:
        raise TypeError(
            f"add_scalars: {name} must be an integer, got {type(value).__name__}: {value!r}"
        ) from None
