"""CheckpointHook's asynchronous saves: what one in flight needs once its write is over.

With ``async_save=True`` the hook's state moves at save time exactly as with a synchronous
save (the kept steps, ``last_ckpt`` in the message hub), so the checkpoints and the hooks see
the same thing either way. What must wait for the file to be complete runs in the writer's
thread after the write: moving the ``last_checkpoint`` pointers, then deleting the checkpoint
that ``max_keep_ckpts`` dropped. A kill at any moment thus leaves the pointer on a complete
checkpoint. A failed write is handled at the next save, at the end of training or when the
writer is waited for otherwise, as a failed synchronous save would have been: the state
goes back to the previous checkpoint, and training goes on with an error in the log or stops
(``on_save_error``).
"""

from __future__ import annotations

import errno
import logging
from collections import deque
from dataclasses import dataclass
from typing import Any

from treadle.dist import is_main_process
from treadle.logging import print_log

from ..checkpoint.host_copy import hook_tensors
from .checkpoint_failure import (
    CheckpointSaveError,
    describe,
    failure_on_any_rank,
    pointer_failed,
    storage_failure,
)


@dataclass
class SaveInFlight:
    """A checkpoint handed to the background writer and not yet known to be complete."""

    path: str
    previous: str | None
    kept: list[int]  # the kept steps before this save: restored if its write fails
    unit: str
    step: int
    pointer_error: OSError | None = None
    written: bool = False  # set in the writer's thread once the file is complete


def unfinished_write() -> OSError:
    """The failure of a write whose error was reported to another caller of the writer."""
    return OSError(errno.EIO, "the write did not complete (its error was reported above)")


def background_write_failed(hook: Any, save: SaveInFlight, exc: OSError) -> None:
    """Log (or raise, with ``on_save_error='stop'``) the failed background write of ``save``."""
    kept = (
        f"the previous checkpoint {save.previous} is intact and last_checkpoint still names it"
        if save.previous
        else "no earlier checkpoint of this run exists"
    )
    message = (
        f"CheckpointHook: the background write of {save.path} (saved at {save.unit} "
        f"{save.step}, async_save=True) failed: {describe(exc)}; {kept}"
    )
    if hook.on_save_error == "stop":
        raise CheckpointSaveError(
            exc.errno if exc.errno is not None else errno.EIO,
            f"{message}; training stops (CheckpointHook on_save_error='stop')",
        ) from exc
    print_log(
        f"{message}; training goes on (CheckpointHook(on_save_error='stop') stops instead)",
        logger="current",
        level=logging.ERROR,
    )


def prepare_async_save(runner: Any) -> None:
    """Have the strategy make the host buffers of the first asynchronous save ready ahead of
    it (where its CheckpointIO can), for the model's, the optimizers' and the hooks' tensors."""
    strategy = getattr(runner, "strategy", None)
    prepare = getattr(strategy, "prepare_async_save", None)
    if prepare is not None:
        prepare(lambda: hook_tensors(runner))


def after_write(strategy: Any, callback: Any) -> None:
    """Run ``callback`` once the save in flight is complete (at once where the strategy's
    CheckpointIO writes synchronously)."""
    later = getattr(strategy.checkpoint_io, "after_write", None)
    if later is None:
        callback()
    else:
        later(callback)


# Steps dropped by max_keep_ckpts whose files a kill may have left: a resumed run deletes them.
STALE = "stale_ckpt_ids"


class AsyncSaves:
    """CheckpointHook's asynchronous saves (``async_save=True``): the pointers move and the
    dropped checkpoint goes in the writer's thread once the file is complete, and the save in
    flight is settled (waited for, its failure handled) before the next one.

    Example:
        >>> from treadle.runner.hooks import CheckpointHook
        >>> hook = CheckpointHook(interval=1, async_save=True)
        >>> hook._in_flight is None
        True
    """

    def _finish_in_background(
        self, runner: Any, previous: str | None, kept: list[int], step: int, dropped: int | None
    ) -> None:
        """Move the pointers, then delete the dropped checkpoint, in the writer's thread once
        the file is complete (never when its write failed)."""
        unit = "epoch" if self.by_epoch else "iteration"
        save = SaveInFlight(str(self.last_ckpt), previous, kept, unit, step)
        self._in_flight = save
        removal = None if dropped is None else self._removable(dropped)
        if not is_main_process():
            return

        def finish() -> None:
            save.written = True
            try:
                self._write_pointers(runner)
            except OSError as exc:  # reported on the training thread by _settle_async_save
                save.pointer_error = exc
            if removal is not None:
                self._remove_path(removal)

        after_write(runner.strategy, finish)

    def _settle_async_save(self, runner: Any) -> None:
        """Wait for the asynchronous save in flight (its write, pointers and deletion) and
        handle its failure as a failed synchronous save: every rank calls it together."""
        save, self._in_flight = self._in_flight, None
        if save is None:
            return
        try:
            runner.strategy.wait_for_checkpoint()
        except (OSError, RuntimeError) as exc:
            failure = storage_failure(exc, self.out_dir, save.previous)
            if failure is None:  # not the storage's fault
                raise
        else:
            # Its error may have been raised to whoever waited for the writer first (a
            # rollback, a preemption): a write that is over and never finished failed.
            failure = None if save.written or not is_main_process() else unfinished_write()
        failure = failure_on_any_rank(failure)
        if failure is not None:
            # As if that save had not been asked for: the pointers still name `previous`.
            self.last_ckpt = save.previous
            runner.message_hub.update_info("last_ckpt", save.previous)
            if self.max_keep_ckpts > 0:
                self.keep_ckpt_ids = deque(save.kept, self.max_keep_ckpts)
                runner.message_hub.update_info("keep_ckpt_ids", list(save.kept))
                runner.message_hub.update_info(STALE, [])
            background_write_failed(self, save, failure)
        elif save.pointer_error is not None:
            pointer_failed(runner, self, save.path, save.pointer_error)
