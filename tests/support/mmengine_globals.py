"""MMEngine's process-wide state, put back after a test that runs MMEngine's Runner in-process.

MMEngine's Runner makes its DefaultScope, MMLogger, MessageHub and Visualizer current (each a
ManagerMixin with a class-level table of instances); left behind, they change what later parity
tests build and log (a current default scope of 'mmengine' changes registry lookups).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def mmengine_globals_restored() -> Iterator[None]:
    """Snapshot the instance tables of MMEngine's managers; restore them on exit."""
    from mmengine.logging import MessageHub, MMLogger
    from mmengine.registry import DefaultScope
    from mmengine.visualization import Visualizer

    managers = (DefaultScope, MMLogger, MessageHub, Visualizer)
    saved = [dict(manager._instance_dict) for manager in managers]
    try:
        yield
    finally:
        for manager, instances in zip(managers, saved, strict=True):
            manager._instance_dict.clear()
            manager._instance_dict.update(instances)
