"""Counting Python calls while a Runner trains (the hook-cost tests: which hook methods the
loop calls at every step)."""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any


def calls_while_training(runner: Any, functions: dict[str, object]) -> Counter:
    """How many times each of ``functions`` (by name) ran during ``runner.train()``."""
    codes = {function.__code__: name for name, function in functions.items()}
    counts: Counter = Counter()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            counts[codes[frame.f_code]] += 1

    sys.setprofile(profile)
    try:
        runner.train()
    finally:
        sys.setprofile(None)
    return counts
