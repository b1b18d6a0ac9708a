"""Build the Runner a config asks for: ``runner_type`` through RUNNERS, else ``Runner``."""

from __future__ import annotations

from typing import Any

from treadle.config import Config


def build_runner(cfg: Config) -> Any:
    """``RUNNERS.build(cfg)`` when the config names a ``runner_type``, else
    ``Runner.from_cfg(cfg)``: what MMEngine projects' tools/train.py do. The caller resumes the
    collector (``startup_gc.resume``) once it has the runner."""
    # Imported here: `treadle --help` and `treadle plot` do not pay for the engine.
    if "runner_type" in cfg:
        from treadle.runner.registry import RUNNERS

        return RUNNERS.build(cfg)
    from treadle.runner.runner import Runner

    return Runner.from_cfg(cfg)
