"""Optimizer states keyed by parameter index (``optimizer.state_dict()``) or by parameter name
(torch.distributed.checkpoint's ``get_optimizer_state_dict``, what FSDP checkpoints hold), turned
into each other.

Both list the parameters of each group in the same order (the order they were given to the
optimizer), so a key of one is matched to the key at the same place in the other: no model is
needed, only the state dict to imitate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _is_optimizer_state(value: Any) -> bool:
    return isinstance(value, Mapping) and "param_groups" in value and "state" in value


def _keys(state: Mapping[str, Any]) -> list[Any]:
    return [key for group in state["param_groups"] for key in group["params"]]


def rekey_optimizer_state(loaded: Any, like: Any) -> Any:
    """``loaded`` (an optimizer wrapper's state, or a dict of them) with its parameter keys
    replaced by those of ``like`` at the same places; unchanged where the keys are already of
    the same kind or the groups do not line up.

    Example:
        >>> by_name = {'state': {'w': {'step': 1}}, 'param_groups': [{'lr': 1, 'params': ['w']}]}
        >>> by_index = {'state': {}, 'param_groups': [{'lr': 1, 'params': [0]}]}
        >>> rekey_optimizer_state(by_name, by_index)['state']
        {0: {'step': 1}}
    """
    if not isinstance(loaded, Mapping) or not isinstance(like, Mapping):
        return loaded
    if not (_is_optimizer_state(loaded) and _is_optimizer_state(like)):
        return {
            key: rekey_optimizer_state(value, like[key]) if key in like else value
            for key, value in loaded.items()
        }
    old, new = _keys(loaded), _keys(like)
    same_layout = [len(g["params"]) for g in loaded["param_groups"]] == [
        len(g["params"]) for g in like["param_groups"]
    ]
    if not old or not same_layout or type(old[0]) is type(new[0]):
        return loaded
    mapping = dict(zip(old, new, strict=True))
    result = dict(loaded)
    result["state"] = {mapping.get(key, key): value for key, value in loaded["state"].items()}
    result["param_groups"] = [
        {**group, "params": [mapping[key] for key in group["params"]]}
        for group in loaded["param_groups"]
    ]
    return result
