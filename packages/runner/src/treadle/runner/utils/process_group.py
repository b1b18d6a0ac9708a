"""Ending a process group that a run started, before the interpreter tears torch down."""

from __future__ import annotations

import atexit
import contextlib
from datetime import timedelta

_registered = False
# Set once a collective failed: the ranks can no longer meet at exit.
_group_broken = False

# How long a rank waits at exit for the others before ending the group anyway (a rank that
# failed never comes).
EXIT_BARRIER_TIMEOUT = timedelta(seconds=30)


def end_process_group_at_exit() -> None:
    """Destroy the default process group at interpreter exit if it still exists then.

    The Runner and the strategies call this right after they start a group: a gloo group left
    to torch's own teardown at exit can abort the process. On gloo the ranks first meet at a
    barrier (``monitored_barrier``, at most 30 s), so that none tears its connections down
    while another still talks to it. Calling it again does nothing more.

    Example:
        >>> end_process_group_at_exit()
    """
    global _registered
    if not _registered:
        _registered = True
        atexit.register(_end_process_group)


def skip_exit_barrier() -> None:
    """End the group at exit without meeting the other ranks first: a collective failed (a
    rank died or timed out), and the barrier would only wait for its own timeout.

    Example:
        >>> skip_exit_barrier()  # doctest: +SKIP
    """
    global _group_broken
    _group_broken = True


def _end_process_group() -> None:
    import torch.distributed as torch_dist

    if not (torch_dist.is_available() and torch_dist.is_initialized()):
        return
    with contextlib.suppress(Exception):
        gloo = torch_dist.get_backend() == "gloo"
        if gloo and torch_dist.get_world_size() > 1 and not _group_broken:
            torch_dist.monitored_barrier(timeout=EXIT_BARRIER_TIMEOUT)
    with contextlib.suppress(Exception):
        torch_dist.destroy_process_group()
