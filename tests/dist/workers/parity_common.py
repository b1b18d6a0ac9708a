"""Helpers of the MMEngine parity tests (test_mmengine_parity.py and parity_scenarios.py):
run one case on both libraries and turn what it returned into plain, picklable, comparable
Python values."""

import torch


def snapshot(value):
    """``value`` as plain data: tensors become ``('tensor', dtype, shape, values)``; lists,
    tuples and dicts keep their type's name, so a list and a tuple never compare equal."""
    if isinstance(value, torch.Tensor):
        return ("tensor", str(value.dtype), tuple(value.shape), value.tolist())
    if isinstance(value, torch.device):
        return ("device", str(value))
    if isinstance(value, dict):
        return (type(value).__name__, {key: snapshot(item) for key, item in value.items()})
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [snapshot(item) for item in value])
    return value


def outcome(case, library, *args, **kwargs):
    """``('ok', snapshot of what case(library, ...) returned)`` or ``('raises', type name)``:
    the messages are each library's own, the exception types are what user code catches."""
    try:
        return ("ok", snapshot(case(library, *args, **kwargs)))
    except Exception as error:
        return ("raises", type(error).__name__)


def both(case, *args, **kwargs):
    """Run ``case`` on MMEngine's dist, then on treadle's, with the same arguments (in this
    order on every rank, so their collectives pair up)."""
    import mmengine.dist as mmengine_dist

    import treadle.dist as treadle_dist

    return {
        "mmengine": outcome(case, mmengine_dist, *args, **kwargs),
        "treadle": outcome(case, treadle_dist, *args, **kwargs),
    }
