"""Which way is better for a metric that CheckpointHook's ``save_best`` names.

A rule is 'greater' (accuracy, mAP...) or 'less' (a loss). When the user names none, it is
inferred from the metric's name: an exact match in the greater or less keys first, then a
key contained in the name; a name that matches nothing is an error asking for ``rule``.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from math import inf

RULES: dict[str, Callable[[float, float], bool]] = {"greater": operator.gt, "less": operator.lt}
INITIAL_SCORE = {"greater": -inf, "less": inf}


def infer_rule(key: str, greater_keys: Sequence[str], less_keys: Sequence[str]) -> str:
    """The rule for the metric ``key`` (case-insensitive), inferred from its name.

    Example:
        >>> infer_rule('accuracy/top1', ['acc'], ['loss'])
        'greater'
    """
    lowered = key.lower()
    greater = {name.lower() for name in greater_keys}
    less = {name.lower() for name in less_keys}
    # Exact matches first, so a key listed as 'less' wins over a 'greater' substring of it.
    if lowered in greater:
        return "greater"
    if lowered in less:
        return "less"
    if any(name in lowered for name in greater):
        return "greater"
    if any(name in lowered for name in less):
        return "less"
    raise ValueError(
        f"CheckpointHook: cannot tell whether a greater or a smaller {key!r} is better: set "
        f"rule='greater' or rule='less' (greater_keys are {sorted(greater_keys)}, less_keys "
        f"are {sorted(less_keys)})"
    )


def resolve_rules(
    rules: Sequence[str | None],
    keys: Sequence[str],
    greater_keys: Sequence[str],
    less_keys: Sequence[str],
) -> list[str | None]:
    """One rule per key of ``keys`` ('auto' keeps None until the first metrics arrive).

    Example:
        >>> resolve_rules([None], ['acc', 'loss'], ['acc'], ['loss'])
        ['greater', 'less']
    """
    if len(rules) == 1:
        rules = list(rules) * len(keys)
    if len(rules) != len(keys):
        raise ValueError(
            f"CheckpointHook: rule must name one rule or one per save_best key ({list(keys)}), "
            f"got {list(rules)}"
        )
    resolved: list[str | None] = []
    for rule, key in zip(rules, keys, strict=True):
        if rule is not None and rule not in RULES:
            raise ValueError(
                f"CheckpointHook: rule must be 'greater', 'less' or None, got {rule!r} "
                f"(for save_best={key!r})"
            )
        if rule is None and key != "auto":
            rule = infer_rule(key, greater_keys, less_keys)
        resolved.append(rule)
    return resolved
