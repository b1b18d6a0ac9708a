"""treadle.runner.log_processor: the log line of a run and the scalars sent to trackers.

The API follows MMEngine 0.10's ``mmengine.runner.LogProcessor``; ``LOG_PROCESSORS`` finds it by
importing this package, so ``log_processor=dict(window_size=50)`` in a config builds it.
"""

from __future__ import annotations

from .errors import CustomCfgError, CustomCfgTypeError, MeanPatternError, WindowSizeError
from .log_processor import LogProcessor

__all__ = [
    "CustomCfgError",
    "CustomCfgTypeError",
    "LogProcessor",
    "MeanPatternError",
    "WindowSizeError",
]
