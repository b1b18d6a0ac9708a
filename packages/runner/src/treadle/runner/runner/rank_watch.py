"""``watch_ranks``: the heartbeats and the watcher of :mod:`.rank_health` around
``Runner.train`` with several processes, and the clear error when a collective fails."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from treadle.dist import get_dist_info
from treadle.runner.loops.train_loop import AFTER_EPOCH, AFTER_ITER
from treadle.runner.utils.process_group import skip_exit_barrier

from .rank_failure import RankFailureError, is_collective_failure
from .rank_health import RankHealth, default_store

# train() calls of this process so far (every rank makes the same calls: they train together).
_runs = 0


def loop_position(loop: Any) -> tuple[str, tuple[int, int]]:
    """Where ``loop`` (a train loop) is, in words and as progress: the iteration it is in
    (1-based, as the log counts), and whether its after_train_iter / after_train_epoch hooks
    run."""
    iteration = int(getattr(loop, "iter", 0))
    phase = getattr(loop, "_phase", None)
    if phase == AFTER_ITER:
        return f"at iteration {iteration + 1}, in its after_train_iter hooks", (iteration, 2)
    if phase == AFTER_EPOCH:
        epoch = int(getattr(loop, "epoch", 0))
        return f"after epoch {epoch + 1}, in its after_train_epoch hooks", (iteration, 0)
    return f"at iteration {iteration + 1}", (iteration, 1)


@contextlib.contextmanager
def watch_ranks(runner: Any) -> Iterator[None]:
    """Heartbeats and a watcher around the training of ``runner`` with several processes
    (nothing with one); a failed collective becomes a :class:`RankFailureError`.

    Example:
        >>> with watch_ranks(runner):
        ...     runner.train_loop.run()
    """
    global _runs
    rank, world_size = get_dist_info()
    store = default_store() if world_size > 1 else None
    if store is None:
        yield
        return
    _runs += 1

    def position() -> tuple[str, tuple[int, int]]:
        return loop_position(runner.train_loop)

    health = RankHealth(store, rank, world_size, position, runner.logger, run=_runs)
    health.start()
    try:
        yield
    except Exception as error:
        if not is_collective_failure(error):
            health.publish_failure(f"{type(error).__name__}: {str(error)[:500]}", abort=False)
            raise
        health.reporting = True
        skip_exit_barrier()
        message = health.diagnose(error, getattr(runner, "model", None))
        health.publish_failure(message, abort=True)
        raise RankFailureError(message) from error
    finally:
        health.stop()


__all__ = ["RankFailureError", "loop_position", "watch_ranks"]
