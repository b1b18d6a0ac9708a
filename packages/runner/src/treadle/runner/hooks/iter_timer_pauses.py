"""Checkpoint saves, timed: how long each took, for the log and for the train ETA.

``Runner.save_checkpoint`` calls :func:`record_checkpoint_save` after every save. It logs the
duration and keeps a running total in the message hub's runtime info under
``checkpoint_saves``: ``(saves, seconds, ended_at)``, where ``ended_at`` is the host clock
(``time.perf_counter``) when the last save returned. IterTimerHook reads it to leave the save
out of the next iteration's time and to count the saves still to come at their mean duration.
The record is process-local (a clock reading) and is never written into checkpoints.
"""

from __future__ import annotations

import time
from typing import Any

SAVES_KEY = "checkpoint_saves"
_NO_SAVES = (0, 0.0, 0.0)


def checkpoint_saves(runner: Any) -> tuple[int, float, float]:
    """``(saves, seconds, ended_at)`` recorded so far in ``runner``'s message hub.

    Example:
        >>> from types import SimpleNamespace
        >>> checkpoint_saves(SimpleNamespace(message_hub=SimpleNamespace(runtime_info={})))
        (0, 0.0, 0.0)
    """
    return runner.message_hub.runtime_info.get(SAVES_KEY, _NO_SAVES)


def record_checkpoint_save(runner: Any, filename: str, started: float, async_save: bool) -> float:
    """Log how long the save of ``filename`` that began at ``started`` (``perf_counter``)
    took, add it to the hub's record, and return the seconds.

    Example:
        >>> record_checkpoint_save(runner, 'iter_10.pth', started, False)  # doctest: +SKIP
        0.42
    """
    ended = time.perf_counter()
    took = ended - started
    saves, seconds, _ = checkpoint_saves(runner)
    runner.message_hub.update_info(SAVES_KEY, (saves + 1, seconds + took, ended), resumed=False)
    if async_save:
        # The call returns once the state is copied; the file is written in the background.
        runner.logger.info(f"Checkpoint {filename} handed to the background writer in {took:.2f}s")
    else:
        runner.logger.info(f"Checkpoint {filename} saved in {took:.2f}s")
    return took
