"""When CheckpointHook saves next, and how many saves are still to come (a mixin of the hook:
it reads ``by_epoch``, ``interval``, ``save_begin`` and ``save_last``)."""

from __future__ import annotations

from typing import Any


class SaveSchedule:
    """The save schedule of CheckpointHook (see the module's docstring).

    Example:
        >>> from types import SimpleNamespace
        >>> from treadle.runner.hooks import CheckpointHook
        >>> hook = CheckpointHook(interval=4, by_epoch=False)
        >>> hook.next_train_iter(SimpleNamespace(max_iters=10), iteration=0, batch_idx=0)
        3
    """

    by_epoch: bool
    interval: int
    save_begin: int
    save_last: bool

    def next_train_iter(self, runner: Any, iteration: int, batch_idx: int) -> int | None:
        """The next iteration that saves (none while saving by epoch)."""
        if self.by_epoch:
            return None
        done = iteration + 1
        candidates = []
        if self.interval > 0:
            first = max(done, self.save_begin)
            candidates.append(first + -(first - self.save_begin) % self.interval)
        if self.save_last and runner.max_iters >= done:
            candidates.append(runner.max_iters)
        return min(candidates) - 1 if candidates else None

    # The saves still to come: part of the ETA (the train ETA counts them).
    def saves_left(self, runner: Any) -> int:
        """How many periodic and last checkpoints this hook will still write in the current
        training, counted from the epoch (or iteration) in progress on; best checkpoints
        depend on scores to come and are not counted (they belong to validation's time).

        Example:
            >>> from types import SimpleNamespace
            >>> from treadle.runner.hooks import CheckpointHook
            >>> hook = CheckpointHook(interval=4, by_epoch=False)
            >>> hook.saves_left(SimpleNamespace(iter=0, max_iters=10))  # 4, 8 and the last
            3
        """
        if self.by_epoch:
            done, last = runner.epoch, runner.max_epochs
        else:
            done, last = runner.iter, runner.max_iters
        # The step in progress (done + 1) has not saved yet: the hooks that save run after it.
        low = max(done + 1, self.save_begin, 1)
        count = 0
        if self.interval > 0 and low <= last:
            # Multiples of the interval among p - save_begin for p in low..last.
            count = (last - self.save_begin) // self.interval - (
                low - self.save_begin - 1
            ) // self.interval
        if self.save_last and last > done:
            since = last - self.save_begin
            if not (self.interval > 0 and since >= 0 and since % self.interval == 0):
                count += 1
        return count
