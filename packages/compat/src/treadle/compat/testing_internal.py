"""``mmengine.testing._internal``: MMEngine carries a copy of PyTorch's multi-process test case;
treadle gives PyTorch's own (same API), imported on first use since it is heavy.

Importing PyTorch's test utilities freezes ``torch.backends`` flags for the whole process
(``torch.backends.disable_global_flags()``: ``cudnn.benchmark = True`` then raises "not allowed
to set torch.backends.cudnn flags"); MMEngine's copy does not, so the freeze is undone here
unless the flags were frozen already.
"""

from __future__ import annotations

from typing import Any

_NAMES = ("MultiProcessTestCase", "TEST_SKIPS", "TestSkip")


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import torch.backends

    frozen_before = torch.backends.flags_frozen()
    from torch.testing._internal import common_distributed

    if not frozen_before and torch.backends.flags_frozen():
        # torch.backends has no public way back: set the flag disable_global_flags clears, in
        # the namespace its functions read (the module object itself may be a wrapper).
        torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True
    return getattr(common_distributed, name)
