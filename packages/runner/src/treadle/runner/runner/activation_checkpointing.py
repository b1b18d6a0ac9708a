"""Activation checkpointing of named submodules (``cfg.activation_checkpointing``).

The implementation lives in :mod:`treadle.runner.strategies.activation_checkpointing`, where
every strategy reaches it; this module keeps the Runner's import path (MMEngine's
``mmengine.runner.activation_checkpointing``).
"""

from __future__ import annotations

from treadle.runner.strategies.activation_checkpointing import (
    apply_activation_checkpointing,
    turn_on_activation_checkpointing,
)

__all__ = ["apply_activation_checkpointing", "turn_on_activation_checkpointing"]
