"""Checks of a sampler state before a sampler takes it (``load_state_dict``).

A state is the position of one rank in its share of the samples; it only means the same thing
to a sampler that splits the same dataset the same way, so the values that decide the split
must match, and a mismatch names both values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def check_sampler_state(
    sampler: object, state: Mapping[str, Any], expected: Mapping[str, Any], max_position: int
) -> int:
    """The position of ``state`` after checking that its ``expected`` keys match; a
    ValueError names the key, the saved value and this sampler's value."""
    name = type(sampler).__name__
    if not isinstance(state, Mapping):
        raise TypeError(f"{name}.load_state_dict needs a dict, got {type(state).__name__}")
    if "global_batch_size" in state and "global_batch_size" not in expected:
        raise ValueError(
            f"cannot resume {name} from a state saved by an elastic run (its position counts "
            f"global batches of {state['global_batch_size']} samples over all processes, not "
            f"one rank's samples): resume it with the same "
            f"elastic=dict(global_batch_size={state['global_batch_size']})"
        )
    missing = [key for key in (*expected, "seed", "position") if key not in state]
    if missing:
        raise KeyError(
            f"the state given to {name}.load_state_dict has no {', '.join(map(repr, missing))} "
            f"(its keys: {sorted(state)}); was it saved by a {name}?"
        )
    for key, value in expected.items():
        if state[key] != value:
            raise ValueError(
                f"cannot resume {name} from a state saved with {key}={state[key]!r}: this "
                f"sampler has {key}={value!r}; the saved position only means the same samples "
                f"with the same {key}"
            )
    position = state["position"]
    if isinstance(position, bool) or not isinstance(position, int) or position < 0:
        raise ValueError(f"{name} state: position must be a non-negative int, got {position!r}")
    if position > max_position:
        raise ValueError(
            f"{name} state: position {position} is past the end of an epoch of this rank "
            f"({max_position} samples)"
        )
    return position
