"""The runner's hooks: the default ones, their order by priority, and a dispatch table that
calls at each point only the hooks that do something there."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from typing import Any

from treadle.config import Config
from treadle.runner.hooks.hook import Hook
from treadle.runner.hooks.priority import Priority, get_priority
from treadle.runner.registry import HOOKS

# MMEngine's default hooks, in the order they are registered.
DEFAULT_HOOKS: dict[str, dict[str, Any]] = dict(
    runtime_info=dict(type="RuntimeInfoHook"),
    timer=dict(type="IterTimerHook"),
    sampler_seed=dict(type="DistSamplerSeedHook"),
    logger=dict(type="LoggerHook"),
    param_scheduler=dict(type="ParamSchedulerHook"),
    checkpoint=dict(type="CheckpointHook", interval=1),
)

# Hook's points that only forward to one of these shared helpers.
_HELPER_OF = {
    **{f"before_{m}_epoch": "_before_epoch" for m in ("train", "val", "test")},
    **{f"after_{m}_epoch": "_after_epoch" for m in ("train", "val", "test")},
    **{f"before_{m}_iter": "_before_iter" for m in ("train", "val", "test")},
    **{f"after_{m}_iter": "_after_iter" for m in ("train", "val", "test")},
}

# The iteration points, whose forwarders pass every argument on (the epoch ones drop metrics).
_ITER_HELPER_OF = {point: helper for point, helper in _HELPER_OF.items() if "_iter" in point}


def merge_default_hooks(hooks: Mapping[str, Any] | None) -> dict[str, Any]:
    """The default hooks with ``hooks`` applied: a key replaces the default of that name (or
    adds one), None removes it.

    Example:
        >>> sorted(merge_default_hooks(dict(timer=None, logger=dict(type='LoggerHook'))))
        ['checkpoint', 'logger', 'param_scheduler', 'runtime_info', 'sampler_seed']
    """
    merged: dict[str, Any] = copy.deepcopy(DEFAULT_HOOKS)
    if hooks is None:
        return merged
    if not isinstance(hooks, (Mapping, Config)):
        raise TypeError(
            f"default_hooks should be a dict of hook configs by name, got "
            f"{type(hooks).__name__}: {hooks!r}"
        )
    for name, hook in hooks.items():
        if hook is None:
            merged.pop(name, None)
        elif isinstance(hook, (Mapping, Config, Hook)):
            merged[name] = hook
        else:
            raise TypeError(
                f"default_hooks[{name!r}] should be a hook config dict, a Hook or None (to "
                f"remove it), got {type(hook).__name__}: {hook!r}"
            )
    return merged


def build_hook(hook: Any, where: str) -> tuple[Hook, Any]:
    """The hook object of a Hook or a config, and the priority its config names (or None)."""
    if isinstance(hook, Hook):
        return hook, None
    if not isinstance(hook, (Mapping, Config)):
        raise TypeError(
            f"{where} should be an instance of Hook or dict (a HOOKS config), got "
            f"{type(hook).__name__}: {hook!r}"
        )
    cfg = copy.deepcopy(dict(hook))
    priority = cfg.pop("priority", None)
    try:
        built = HOOKS.build(cfg)
    except Exception as error:
        error.add_note(f"while building {where}: {dict(hook)!r}")
        raise
    if not isinstance(built, Hook):
        raise TypeError(
            f"{where}: {type(built).__name__} is not a Hook (subclass treadle.runner.hooks.Hook)"
        )
    return built, priority


def insert_by_priority(hooks: list[Hook], hook: Hook) -> None:
    """Put ``hook`` after every hook of lower or equal priority number (registration order
    among equals)."""
    level = get_priority(hook.priority)
    for index in range(len(hooks) - 1, -1, -1):
        if level >= get_priority(hooks[index].priority):
            hooks.insert(index + 1, hook)
            return
    hooks.insert(0, hook)


def _acts_at(hook: Hook, point: str) -> bool:
    """Whether calling ``hook.point`` can do anything (Hook's own methods do nothing)."""
    if point in vars(hook):
        return True
    own = getattr(type(hook), point, None)
    if own is None:
        return False
    if own is not getattr(Hook, point, None):
        return True
    helper = _HELPER_OF.get(point)
    if helper is None:
        return False
    return helper in vars(hook) or getattr(type(hook), helper) is not getattr(Hook, helper)


class HookDispatch:
    """For each hook point, the bound methods of the hooks that act there, in priority
    order; rebuilt when the hooks change. Calling a point then costs one dict lookup and one
    call per hook that does something.

    Example:
        >>> class Count(Hook):
        ...     calls = 0
        ...     def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        ...         Count.calls += 1
        >>> dispatch = HookDispatch()
        >>> dispatch.reset([Count(), Hook()])
        >>> len(dispatch.methods('after_train_iter')), len(dispatch.methods('before_run'))
        (1, 0)
    """

    def __init__(self) -> None:
        self._hooks: list[Hook] = []
        self._table: dict[str, list[tuple[Hook, Callable[..., Any]]]] = {}
        # Counts the changes, so that a table kept elsewhere (the train loops') sees them.
        self.version = 0

    def reset(self, hooks: list[Hook]) -> None:
        self._hooks = list(hooks)
        self._table = {}
        self.version += 1

    def methods(self, point: str) -> list[tuple[Hook, Callable[..., Any]]]:
        found = self._table.get(point)
        if found is None:
            found = [
                (hook, _bound(hook, point))
                for hook in self._hooks
                if _acts_at(hook, point) and callable(getattr(hook, point, None))
            ]
            self._table[point] = found
        return found


def _bound(hook: Hook, point: str) -> Callable[..., Any]:
    """``hook.point``; where that is Hook's own forwarder of an iteration point (which only
    calls ``_before_iter``/``_after_iter`` with the same arguments and the loop's mode), the
    helper itself with the mode bound: one Python call less per hook and iteration."""
    helper = _ITER_HELPER_OF.get(point)
    if (
        helper is not None
        and point not in vars(hook)
        and getattr(type(hook), point, None) is getattr(Hook, point)
    ):
        return functools.partial(getattr(hook, helper), mode=point.split("_")[1])
    return getattr(hook, point)


class HookList(list):
    """The runner's list of hooks: editing it in place (``runner.hooks.append(hook)``, as
    MMEngine code does) tells the dispatch table to rebuild, so the next call sees the edit.

    Example:
        >>> dispatch = HookDispatch()
        >>> hooks = HookList(dispatch)
        >>> hooks.append(Hook())
        >>> len(dispatch._hooks)
        1
    """

    def __init__(self, dispatch: HookDispatch, hooks: Any = ()) -> None:
        super().__init__(hooks)
        self._dispatch = dispatch
        dispatch.reset(self)

    def _changed(self) -> None:
        self._dispatch.reset(self)


def _notifying(name: str) -> Callable[..., Any]:
    method = getattr(list, name)

    def edit(self: HookList, *args: Any, **kwargs: Any) -> Any:
        result = method(self, *args, **kwargs)
        self._changed()
        return result

    edit.__name__ = name
    return edit


for _name in (
    "append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse",
    "__setitem__", "__delitem__", "__iadd__", "__imul__",
):  # fmt: skip
    setattr(HookList, _name, _notifying(_name))


def priority_name(priority: Any) -> str:
    """``'NORMAL'`` for 50, the number itself for a value that has no name."""
    try:
        return Priority(get_priority(priority)).name
    except ValueError:
        return str(priority)


def hooks_info(hooks: list[Hook]) -> str:
    """The hooks of each stage in calling order, as the runner logs them at start."""
    by_stage: dict[str, list[str]] = {stage: [] for stage in Hook.stages}
    for hook in hooks:
        line = f"({priority_name(hook.priority):<12}) {type(hook).__name__:<35}"
        for stage in hook.get_triggered_stages():
            by_stage.setdefault(stage, []).append(line)
    blocks = [
        f"{stage}:\n" + "\n".join(lines) + "\n -------------------- "
        for stage, lines in by_stage.items()
        if lines
    ]
    return "\n".join(blocks)
