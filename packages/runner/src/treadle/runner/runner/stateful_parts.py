"""The parts of a runner that a checkpoint reads beside model and optimizer."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def train_dataset(runner: Any) -> Any:
    """The train dataset of ``runner``, or None."""
    # A runner built only to test has no train dataloader: no dataset_meta then.
    loader = getattr(runner, "_train_dataloader", None)
    if loader is None or isinstance(loader, Mapping):
        loader = getattr(runner, "train_dataloader", None)
    return getattr(loader, "dataset", None)


def _hook_key(hook: Any, taken: set[str]) -> str:
    name = type(hook).__name__
    key, index = name, 1
    while key in taken:
        key, index = f"{name}.{index}", index + 1
    taken.add(key)
    return key


def stateful_hooks(runner: Any) -> Iterable[tuple[str, Any]]:
    """``(key, hook)`` for each hook that has state, keyed by class name (``Name.1`` for a
    second hook of the same class)."""
    taken: set[str] = set()
    for hook in getattr(runner, "hooks", ()):
        key = _hook_key(hook, taken)
        if callable(getattr(hook, "state_dict", None)) and callable(
            getattr(hook, "load_state_dict", None)
        ):
            yield key, hook
