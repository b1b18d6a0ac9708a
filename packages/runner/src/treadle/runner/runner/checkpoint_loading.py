"""Reading a runner checkpoint, treadle's or MMEngine's, and loading its weights."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from treadle.runner.checkpoint import _load_checkpoint, _load_checkpoint_to_model
from treadle.runner.model import is_model_wrapper

from .mmengine_migration import migrate_mmengine_checkpoint, mmengine_safe_globals

DEFAULT_REVISE_KEYS = [(r"^module.", "")]


def unwrapped(model: Any) -> Any:
    """The model inside a model wrapper (DDP...), or ``model`` itself."""
    return model.module if is_model_wrapper(model) else model


def read_runner_checkpoint(filename: str, map_location: Any = "cpu") -> dict[str, Any]:
    """Load a checkpoint file written by treadle or by MMEngine 0.10 with ``weights_only``
    loading (MMEngine's classes mapped to treadle's)."""
    with mmengine_safe_globals():
        checkpoint = _load_checkpoint(filename, map_location=map_location)
    if not isinstance(checkpoint, dict):
        raise RuntimeError(
            f"No state_dict found in checkpoint file {filename}: it holds a "
            f"{type(checkpoint).__name__}, not a dict"
        )
    return migrate_mmengine_checkpoint(checkpoint)


def load_runner_checkpoint(
    runner: Any,
    filename: str,
    map_location: str | Callable = "cpu",
    strict: bool = False,
    revise_keys: list | None = None,
) -> dict[str, Any]:
    """``Runner.load_checkpoint``: the weights of ``filename`` into the runner's model (after
    the ``after_load_checkpoint`` hooks); returns the whole checkpoint."""
    checkpoint = read_runner_checkpoint(filename, map_location)
    runner.call_hook("after_load_checkpoint", checkpoint=checkpoint)
    checkpoint = _load_checkpoint_to_model(
        unwrapped(runner.model),
        checkpoint,
        strict,
        revise_keys=DEFAULT_REVISE_KEYS if revise_keys is None else revise_keys,
    )
    runner._has_loaded = True
    runner.logger.info(f"Load checkpoint from {filename}")
    return checkpoint
