"""What CheckpointHook does when a checkpoint cannot be written.

By then treadle.fileio has retried what could be retried (S3's 5xx, throttling, reset
connections, timeouts); the write left nothing under the checkpoint's name (local files are
renamed into place once complete, S3 objects appear whole and failed multipart uploads are
aborted) and the ``last_checkpoint`` pointers still name the previous checkpoint. Training
goes on with an error in the log (``on_save_error='continue'``, the default: hours of compute
are not lost to a storage outage), or stops with :class:`CheckpointSaveError`
(``on_save_error='stop'``). A save whose destination is gone (a deleted bucket) stops training
whatever ``on_save_error`` says: every later save would fail too.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
from typing import Any

from treadle.logging import print_log

CHOICES = ("continue", "stop")


class CheckpointSaveError(OSError):
    """A checkpoint could not be written and ``CheckpointHook(on_save_error='stop')``: training
    stops with it. ``errno`` is the write's (``ENOSPC`` for a full disk).

    Example:
        >>> try:
        ...     runner.train()
        ... except CheckpointSaveError as error:
        ...     print(error.errno == errno.ENOSPC)  # doctest: +SKIP
        True
    """


def check_on_save_error(value: Any) -> str:
    if value not in CHOICES:
        raise ValueError(
            f"CheckpointHook: on_save_error must be 'continue' or 'stop', got {value!r}"
        )
    return value


# torch.save's C++ writer reports a failed write(2) (a full disk...) only as these.
_TORCH_WRITE_FAILURES = ("unexpected pos", "PytorchStreamWriter failed", "inline_container")


def _free_bytes(directory: str) -> int | None:
    try:
        return shutil.disk_usage(directory).free
    except OSError:
        return None


def storage_failure(exc: BaseException, directory: str, previous: str | None) -> OSError | None:
    """``exc`` as the OSError of a failed write, or None when the storage is not to blame.

    torch.save turns the ENOSPC of a local write into ``RuntimeError: [enforce fail at
    inline_container.cc] unexpected pos 128 vs 0``: when the disk of ``directory`` has less
    room left than the previous checkpoint takes (1 MiB without one), that is a full disk."""
    if isinstance(exc, OSError):
        return exc
    if not isinstance(exc, RuntimeError) or "://" in directory:
        return None
    text = str(exc)
    if not any(words in text for words in _TORCH_WRITE_FAILURES):
        return None
    free = _free_bytes(directory)
    needed = 1024 * 1024
    if previous and os.path.isfile(previous):
        needed = max(needed, os.path.getsize(previous))
    if free is not None and free < needed:
        first_line = text.splitlines()[0] if text else ""
        return OSError(
            errno.ENOSPC,
            f"No space left on device: {free} bytes free in {directory} (torch.save: {first_line})",
        )
    return OSError(errno.EIO, f"torch.save could not write the file: {text}")


def destination_gone(exc: BaseException) -> bool:
    """Whether a save failed because the place it writes to no longer exists (a deleted S3
    bucket: treadle.fileio's FileNotFoundError on a write): every later save would fail too."""
    return isinstance(exc, FileNotFoundError) or getattr(exc, "destination_gone", False)


def failure_on_any_rank(failure: OSError | None) -> OSError | None:
    """``failure``, or, on a rank whose own part went well, an error naming the rank whose
    write failed (the lowest); None when every rank's went well. A collective when
    distributed."""
    from treadle.dist import all_reduce, get_rank, get_world_size

    if get_world_size() == 1:
        return failure
    import torch

    # The lowest failed rank, as world_size - rank so that 'max' finds it (0: none failed),
    # and whether a rank found its destination gone (then every rank stops).
    world_size = get_world_size()
    gone = failure is not None and destination_gone(failure)
    flag = torch.tensor([0 if failure is None else world_size - get_rank(), int(gone)])
    all_reduce(flag, op="max")
    failed = int(flag[0].item())
    if failure is not None or failed == 0:
        return failure
    error = OSError(errno.EIO, f"rank {world_size - failed} could not write it (see its log)")
    error.destination_gone = bool(flag[1].item())  # type: ignore[attr-defined]
    return error


def describe(exc: BaseException) -> str:
    """The cause in words, with advice for a full disk or a missing permission."""
    number = getattr(exc, "errno", None)
    if number in (errno.ENOSPC, errno.EDQUOT):
        return (
            f"no space left on the device ({exc}); free space there, save fewer or smaller "
            "checkpoints (max_keep_ckpts, save_optimizer=False) or set out_dir elsewhere"
        )
    if number in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"not allowed to write there ({exc})"
    return f"{type(exc).__name__}: {exc}"


def save_failed(runner: Any, hook: Any, path: str, previous: str | None, exc: OSError) -> None:
    """Log (or raise, with ``on_save_error='stop'``) the failed save of ``path``."""
    unit = "epoch" if hook.by_epoch else "iteration"
    step = runner.epoch + 1 if hook.by_epoch else runner.iter + 1
    kept = (
        f"the previous checkpoint {previous} is intact and last_checkpoint still names it"
        if previous
        else "no earlier checkpoint of this run exists"
    )
    if previous and destination_gone(exc):  # it may have gone with the bucket
        kept = f"last_checkpoint still names the previous checkpoint, {previous}"
    message = f"CheckpointHook: could not save {path} at {unit} {step}: {describe(exc)}; {kept}"
    if hook.on_save_error == "stop" or destination_gone(exc):
        why = (
            "the place it writes to is gone, so every later save would fail too: training stops"
            if destination_gone(exc)
            else "training stops (CheckpointHook on_save_error='stop')"
        )
        raise CheckpointSaveError(
            exc.errno if exc.errno is not None else errno.EIO, f"{message}; {why}"
        ) from exc
    print_log(
        f"{message}; training goes on (CheckpointHook(on_save_error='stop') stops instead)",
        logger="current",
        level=logging.ERROR,
    )


def pointer_failed(runner: Any, hook: Any, path: str | None, exc: OSError) -> None:
    """``path`` was saved whole but ``last_checkpoint`` could not be moved to it."""
    message = (
        f"CheckpointHook: saved {path}, but could not update last_checkpoint to name it: "
        f"{describe(exc)}; a resume still finds it (the newest complete checkpoint wins over "
        "a pointer left behind)"
    )
    if hook.on_save_error == "stop":
        raise CheckpointSaveError(
            exc.errno if exc.errno is not None else errno.EIO,
            f"{message}; training stops (CheckpointHook on_save_error='stop')",
        ) from exc
    print_log(f"{message}; training goes on", logger="current", level=logging.ERROR)


def removal_failed(path: str, exc: OSError) -> None:
    """An old checkpoint (max_keep_ckpts, a replaced best) could not be deleted."""
    print_log(
        f"CheckpointHook: could not delete the old checkpoint {path}: {describe(exc)}; it is "
        "left in place (delete it by hand); training goes on",
        logger="current",
        level=logging.WARNING,
    )
