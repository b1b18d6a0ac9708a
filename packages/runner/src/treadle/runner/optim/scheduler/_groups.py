"""What a scheduler needs from its optimizer: a list of param groups, checked once.

Schedulers accept a ``torch.optim.Optimizer``, an ``OptimWrapper`` or anything else with a list
of ``param_groups`` dicts (duck typing), so that this layer needs neither torch nor the wrapper
classes. An ``OptimWrapperDict`` holds several optimizers: one scheduler list is built per key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def checked_param_groups(optimizer: Any, owner: str) -> Sequence[dict[str, Any]]:
    """The ``param_groups`` of ``optimizer``; TypeError naming ``owner`` when it has none."""
    groups = getattr(optimizer, "param_groups", None)
    kind = type(optimizer).__name__
    if isinstance(groups, Mapping) or (
        groups is None and callable(getattr(optimizer, "keys", None))
    ):
        raise TypeError(
            f"{owner}: the optimizer {kind} holds several optimizers; build one scheduler per "
            f"key instead (e.g. optimizer['generator'])"
        )
    if groups is not None and not isinstance(groups, (str, bytes, Sequence)):
        # A stand-in whose param_groups iterate (a MagicMock(spec=OptimWrapper) in a test, as
        # MMEngine takes it): read them once.
        groups = list(groups) if hasattr(groups, "__iter__") else None
    if (
        groups is None
        or isinstance(groups, (str, bytes))
        or not all(isinstance(group, dict) for group in groups)
    ):
        raise TypeError(
            f"{owner}: ``optimizer`` should be an Optimizer, but got {kind}: pass a "
            "torch.optim.Optimizer or an OptimWrapper (anything with a list of param_groups "
            "dicts)"
        )
    return groups


def missing_key_error(
    owner: str, kind: str, index: int, group: dict[str, Any], key: str
) -> KeyError:
    """A KeyError naming ``key``, the group that lacks it, and the closest keys the group has."""
    from treadle.registry.suggestions import close_matches

    keys = [k for k in group if k != "params"]
    close = close_matches(key, keys)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    return KeyError(
        f"{owner}: param_groups[{index}] of {kind} has no {key!r} (its keys: "
        f"{', '.join(keys)}){hint}"
    )


def one_per_group(value: Any, optimizer: Any, key: str, owner: str) -> list[Any]:
    """``value`` for each param group of ``optimizer``: one value for all, or a list of one per
    group; ValueError naming ``owner`` and ``key`` when the list has another length."""
    count = len(optimizer.param_groups)
    if not isinstance(value, (list, tuple)):
        return [value] * count
    values = list(value)
    if len(values) == count:
        return values
    # An OptimWrapper may list one more group than its optimizer (the base settings it keeps
    # when there are several groups): that one takes the value of the last group.
    inner = getattr(getattr(optimizer, "optimizer", None), "param_groups", None)
    if inner is not None and len(values) == len(inner) == count - 1:
        return [*values, values[-1]]
    groups = len(inner) if inner is not None else count
    raise ValueError(
        f"{owner}: expected {groups} values for {key}, got {len(values)}: {key} has "
        f"{len(values)} values but the optimizer has {groups} param groups"
    )


def record_initial_values(optimizer: Any, param_name: str, last_step: int, owner: str) -> list[Any]:
    """Store ``initial_<param_name>`` in every group (first scheduler wins) and return them.

    A scheduler built with ``last_step >= 0`` resumes a schedule: the initial values must
    already be in the groups, put there by the run that is resumed.
    """
    kind = type(optimizer).__name__
    initial = f"initial_{param_name}"
    values = []
    for index, group in enumerate(optimizer.param_groups):
        if param_name not in group:
            raise missing_key_error(owner, kind, index, group, param_name)
        if initial not in group:
            if last_step != -1:
                raise KeyError(
                    f"{owner}: param {initial!r} is not specified in param_groups[{index}] of "
                    f"{kind} when resuming an optimizer: resuming with last_step={last_step} "
                    "needs the optimizer state of the run it resumes"
                )
            group[initial] = group[param_name]
        values.append(group[initial])
    return values
