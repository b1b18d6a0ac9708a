"""Child processes started with ``spawn`` or ``forkserver`` get the import hook too.

A forked child inherits the parent's ``sys.meta_path``, hook included. A spawned one is a fresh
interpreter that runs ``from multiprocessing.spawn import spawn_main; spawn_main(...)``, then
unpickles its target, whose module (the user's script, an ``mmengine.X`` path) imports mmengine:
without the hook that import fails, or the pool waits forever for a worker that died. So while
the hook is installed, the spawn command line installs it first, and the forkserver (whose
children are forked from it) imports :mod:`treadle.compat.child_hook` before it forks.
DataLoader workers with ``multiprocessing_context='spawn'`` and ``torch.multiprocessing`` go
through the same code.

A forkserver already running when the hook is installed or removed was started with the other
preload, and it would go on forking children that way (hooked after ``uninstall()``, so that
later programs of the process ran on treadle.compat's MMEngine style): it is stopped, and the
next ``forkserver`` child starts a fresh one with the current preload.
"""

from __future__ import annotations

import multiprocessing.forkserver
import multiprocessing.spawn
from collections.abc import Callable
from typing import Any

#: What a spawned interpreter runs before multiprocessing's own code.
INSTALL_FIRST = "import treadle.compat; treadle.compat.install(); "
HOOK_MODULE = "treadle.compat.child_hook"

_original: Callable[..., list[str]] | None = None


def _command_line_with_hook(**kwds: Any) -> list[str]:
    assert _original is not None
    line = list(_original(**kwds))
    # A normal interpreter gets ``-c PROGRAM``; a frozen executable has no program to extend.
    if "-c" in line:
        at = line.index("-c") + 1
        line[at] = INSTALL_FIRST + line[at]
    return line


def _stop_running_forkserver() -> None:
    server = multiprocessing.forkserver._forkserver
    # ``_stop`` (CPython 3.9+) is what multiprocessing's own tests call to stop the server.
    stop = getattr(server, "_stop", None)
    if stop is not None and getattr(server, "_forkserver_pid", None) is not None:
        stop()


def hook_children(on: bool) -> None:
    """Make spawned and forkserver children install the hook (``on``), or stop doing so."""
    global _original
    preload = list(getattr(multiprocessing.forkserver._forkserver, "_preload_modules", []))
    if on and _original is None:
        _original = multiprocessing.spawn.get_command_line
        multiprocessing.spawn.get_command_line = _command_line_with_hook
        if HOOK_MODULE not in preload:
            multiprocessing.forkserver.set_forkserver_preload([*preload, HOOK_MODULE])
            _stop_running_forkserver()
    elif not on and _original is not None:
        multiprocessing.spawn.get_command_line = _original
        _original = None
        if HOOK_MODULE in preload:
            preload.remove(HOOK_MODULE)
            multiprocessing.forkserver.set_forkserver_preload(preload)
            _stop_running_forkserver()
