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
from dataclasses import dataclass
from typing import Any

from treadle.logging import print_log

from ..checkpoint.host_copy import hook_tensors
from .checkpoint_failure import CheckpointSaveError, describe


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
