"""The few names MMEngine modules import from the standard library or define as type aliases
that treadle has no use for itself; looked up last, and only for names MMEngine has at a path."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar  # noqa: F401

# MMEngine's hooks annotate a batch with this alias.
DATA_BATCH = dict | tuple | list | None
T = TypeVar("T")


def check_kineto() -> bool:
    """Whether PyTorch's profiler has its Kineto backend (ProfilerHook needs it).

    Example:
        >>> isinstance(check_kineto(), bool)
        True
    """
    import torch

    return bool(torch.autograd.kineto_available())
