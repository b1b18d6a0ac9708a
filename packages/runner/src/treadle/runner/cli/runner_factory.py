"""Build the Runner a config asks for: ``runner_type`` through RUNNERS, else ``Runner``."""

from __future__ import annotations

from typing import Any

from treadle.config import Config

from . import startup_gc


def build_runner(cfg: Config) -> Any:
    """``RUNNERS.build(cfg)`` when the config names a ``runner_type``, else
    ``Runner.from_cfg(cfg)``: what MMEngine projects' tools/train.py do."""
    # Imported here: `treadle --help` and `treadle plot` do not pay for the engine.
    if "runner_type" in cfg:
        from treadle.runner.registry import RUNNERS

        startup_gc.resume()
        return RUNNERS.build(cfg)
    from treadle.runner.runner import Runner

    # The engine is imported: what exists now lives as long as the process (see startup_gc).
    startup_gc.resume()
    return Runner.from_cfg(cfg)
