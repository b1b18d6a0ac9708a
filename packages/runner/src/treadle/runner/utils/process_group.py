"""Ending a process group that a run started, before the interpreter tears torch down."""

from __future__ import annotations

import atexit
import contextlib

_registered = False


def end_process_group_at_exit() -> None:
    """Destroy the default process group at interpreter exit if it still exists then.

    The Runner and the strategies call this right after they start a group: a gloo group left
    to torch's own teardown at exit can abort the process. Calling it again does nothing more.

    Example:
        >>> end_process_group_at_exit()
    """
    global _registered
    if not _registered:
        _registered = True
        atexit.register(_end_process_group)


def _end_process_group() -> None:
    import torch.distributed as torch_dist

    if torch_dist.is_available() and torch_dist.is_initialized():
        with contextlib.suppress(Exception):
            torch_dist.destroy_process_group()
