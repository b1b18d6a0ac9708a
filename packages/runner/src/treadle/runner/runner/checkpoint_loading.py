"""Reading a runner checkpoint, treadle's or MMEngine's, and loading its weights."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from treadle.runner.strategies import BaseStrategy, SingleDeviceStrategy

from ..checkpoint.run_store import store_backend_args
from .mmengine_migration import migrate_mmengine_checkpoint, mmengine_safe_globals
from .strategy_binding import bound_strategy

DEFAULT_REVISE_KEYS = [(r"^module.", "")]


def read_runner_checkpoint(
    filename: str,
    map_location: Any = "cpu",
    strategy: BaseStrategy | None = None,
    backend_args: dict | None = None,
) -> dict[str, Any]:
    """Read a checkpoint written by treadle or by MMEngine 0.10 through ``strategy`` (default
    one whole file), with ``weights_only`` loading (MMEngine's classes mapped to treadle's);
    ``backend_args`` describe the store it is on (``s3://...``: endpoint, credentials)."""
    if strategy is None:
        strategy = SingleDeviceStrategy()
    with mmengine_safe_globals():
        checkpoint = strategy.read_checkpoint(
            filename, map_location=map_location, backend_args=backend_args
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
    the ``after_load_checkpoint`` hooks), through the runner's strategy; returns the whole
    checkpoint."""
    strategy = bound_strategy(runner)
    # Read through the CheckpointHook's backend_args: the store it saved to.
    backend_args = store_backend_args(runner, filename)
    checkpoint = read_runner_checkpoint(filename, map_location, strategy, backend_args)
    runner.call_hook("after_load_checkpoint", checkpoint=checkpoint)
    # A file of bare weights (a state_dict saved alone) loads as its own state_dict.
    state_dict = checkpoint.get("state_dict", checkpoint)
    strategy.load_model_state_dict(
        state_dict,
        strict=strict,
        revise_keys=DEFAULT_REVISE_KEYS if revise_keys is None else revise_keys,
    )
    runner._has_loaded = True
    runner.logger.info(f"Load checkpoint from {filename}")
    return checkpoint
