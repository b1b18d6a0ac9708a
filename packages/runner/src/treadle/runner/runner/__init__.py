"""treadle.runner.runner: the Runner (MMEngine 0.10's ``mmengine.runner.Runner``), its
FlexibleRunner form, and ``set_random_seed``.

Example:
    >>> from treadle.runner.runner import Runner
    >>> runner = Runner.from_cfg(cfg)  # doctest: +SKIP
"""

from __future__ import annotations

from .activation_checkpointing import turn_on_activation_checkpointing
from .flexible_runner import FlexibleRunner
from .randomness import set_random_seed
from .rank_failure import RankFailureError
from .runner import Runner

__all__ = [
    "FlexibleRunner",
    "RankFailureError",
    "Runner",
    "set_random_seed",
    "turn_on_activation_checkpointing",
]
