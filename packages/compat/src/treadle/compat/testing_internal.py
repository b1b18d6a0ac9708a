"""``mmengine.testing._internal``: MMEngine carries a copy of PyTorch's multi-process test case;
treadle gives PyTorch's own (same API), imported on first use since it is heavy."""

from __future__ import annotations

from typing import Any

_NAMES = ("MultiProcessTestCase", "TEST_SKIPS", "TestSkip")


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from torch.testing._internal import common_distributed

    return getattr(common_distributed, name)
