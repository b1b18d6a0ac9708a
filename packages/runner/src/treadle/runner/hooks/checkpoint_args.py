"""CheckpointHook's arguments: the checks of ``save_best``, ``rule`` and the key lists, and the
deprecated ``file_client_args``.

MMEngine checks these with ``assert``; treadle raises errors that say what was given and are
also AssertionErrors (hooks/errors.py), with MMEngine's words in them.
"""

from __future__ import annotations

from typing import Any

from .errors import HookArgumentError, HookArgumentTypeError


def save_best_names(value: Any) -> list[str] | None:
    """``save_best`` (None, a str or a sequence of str) as a list without duplicates.

    Example:
        >>> save_best_names('acc'), save_best_names(['acc', 'mIoU']), save_best_names(None)
        (['acc'], ['acc', 'mIoU'], None)
    """
    names = names_list(value, "save_best")
    if names is not None and "auto" in names and len(names) > 1:
        raise HookArgumentError(
            f"CheckpointHook: save_best={names}: 'auto' (the evaluator's first metric) cannot "
            "be combined with other keys. Only support one key when it is 'auto'."
        )
    return names


def names_list(value: Any, argument: str) -> list[str] | None:
    """``value`` (None, a str or a sequence of str) as a list without duplicates."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise HookArgumentTypeError(
            f'CheckpointHook: "{argument}" should be a str, a list of str or None, got '
            f"{type(value).__name__}: {value!r}"
        )
    if len(set(value)) != len(value):
        raise HookArgumentError(f"CheckpointHook: {argument} names a key twice: {list(value)}")
    return list(value)


def rules_list(rule: Any, save_best: list[str] | None) -> list[str | None]:
    """``rule`` as a list: one rule for every key, or one per ``save_best`` key.

    Example:
        >>> rules_list('greater', ['acc', 'mIoU']), rules_list(['less'], ['loss'])
        (['greater'], ['less'])
    """
    if rule is None or isinstance(rule, str):
        return [rule]
    if not isinstance(rule, (list, tuple)) or not all(isinstance(r, str) for r in rule):
        raise HookArgumentTypeError(
            f'CheckpointHook: "rule" should be a str, a list of str or None, got '
            f"{type(rule).__name__}: {rule!r}"
        )
    keys = save_best or []
    if len(rule) not in (1, len(keys)):
        raise HookArgumentError(
            f'CheckpointHook: Number of "rule" must be 1 or the number of save_best keys '
            f"({len(keys)}: {keys}), got {len(rule)}: {list(rule)}"
        )
    return list(rule)


def key_names(keys: Any, default: list[str], argument: str) -> list[str] | tuple[str, ...]:
    """``greater_keys`` or ``less_keys``: the default list when None, a str as a 1-tuple, a
    list or tuple as it is (as MMEngine keeps them).

    Example:
        >>> key_names('acc', ['top'], 'greater_keys'), key_names(None, ['top'], 'greater_keys')
        (('acc',), ['top'])
    """
    if keys is None:
        return list(default)
    if isinstance(keys, str):
        return (keys,)
    if not isinstance(keys, (list, tuple)) or not all(isinstance(k, str) for k in keys):
        raise HookArgumentTypeError(
            f"CheckpointHook: {argument} must be a str or a list of str, got {keys!r}"
        )
    return keys


def check_best_with_state(value: Any, save_best: list[str] | None) -> bool:
    """``best_with_state``, refused where no best checkpoint is saved."""
    if not isinstance(value, bool):
        raise TypeError(f"CheckpointHook: best_with_state must be a bool, got {value!r}")
    if value and save_best is None:
        raise ValueError(
            "CheckpointHook: best_with_state=True keeps the optimizer, scheduler and loop state "
            "in the best checkpoint, but save_best is not set, so no best checkpoint is saved: "
            "name the metric with save_best (e.g. save_best='accuracy/top1'), or drop "
            "best_with_state"
        )
    return value
