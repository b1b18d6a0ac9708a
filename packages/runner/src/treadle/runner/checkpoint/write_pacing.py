"""WritePace: a background checkpoint write spread over the training steps that follow it.

Writing a file moves every byte through memory twice (into the page cache, then to the disk),
and on a CPU the training step is bound by the same memory bandwidth: a 256 MiB write that
runs beside one step made that step about twice as long, whatever the writer thread's
niceness. Spread over several steps, each carries a small share. The training thread grants
a share at each optimizer step (``tick``), and the writer takes bytes from it (``take``)
before each piece it writes.

A write never waits for steps that do not come: when no step was seen for several times the
usual step time (validation, the end of training, a loop without torch optimizers) or when
the training thread itself waits for the write (``release``), the rest goes at full speed.

The file goes around the page cache where the file system allows it (:mod:`.direct_file`);
elsewhere each piece goes on to the disk as soon as it is written and leaves the page cache
once it is there (:mod:`.disk_writeback`). The kernel's own writeback of the whole file, later
and in one burst, slowed the steps it fell on more than the write had.

The write reaches the file through :class:`PacedFile` only where the writing thread has a
pace (:func:`pacing`): :func:`treadle.runner.checkpoint.torch_format.save_torch` asks
:func:`current_pace`; every other write is unchanged.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from .disk_writeback import DiskWriteback

# Pieces handed to the file: small enough that the training thread never queues behind one
# long copy into the page cache, large enough that the calls cost nothing.
PIECE_BYTES = 4 << 20
# The least a step may carry: small checkpoints are written in one go.
MIN_SHARE_BYTES = 16 << 20
# Without a step for this many times the usual step time, training is not stepping.
_STALL_STEPS = 4.0
_STALL_MIN_SECONDS = 0.05

_current = threading.local()


class WritePace:
    """How many bytes of a background write each training step allows.

    Example:
        >>> pace = WritePace(share=64 << 20, step_seconds=0.2)
        >>> pace.tick()  # an optimizer step: 64 MiB more may be written
        >>> pace.take(4 << 20)  # the writer, before a 4 MiB piece
        4194304
        >>> pace.release()  # from now on, everything at once
    """

    def __init__(self, share: int, step_seconds: float) -> None:
        self._condition = threading.Condition()
        self._share = max(share, MIN_SHARE_BYTES)
        self._allowed = 0  # the step that copies the weights carries no write
        self._free = False
        self._step_seconds = step_seconds
        self._last_tick: float | None = None

    @property
    def step_seconds(self) -> float:
        """The time between the last two steps (or the estimate given)."""
        return self._step_seconds

    def tick(self) -> None:
        """A training step: its share may be written (called on the training thread)."""
        now = time.monotonic()
        with self._condition:
            if self._last_tick is not None:
                self._step_seconds = now - self._last_tick
            self._last_tick = now
            self._allowed += self._share
            self._condition.notify_all()

    def release(self) -> None:
        """Let the rest of the write go at once (the training thread waits for it)."""
        with self._condition:
            self._free = True
            self._condition.notify_all()

    @property
    def released(self) -> bool:
        """Whether the rest goes at once (``release``, or no step came)."""
        return self._free

    def take(self, wanted: int) -> int:
        """Block until some of ``wanted`` bytes may be written; return how many."""
        with self._condition:
            while not self._free and self._allowed <= 0:
                stall = max(_STALL_MIN_SECONDS, _STALL_STEPS * self._step_seconds)
                if not self._condition.wait(timeout=stall):
                    self._free = True  # no step came: training is busy elsewhere or done
            if self._free:
                return wanted
            granted = min(wanted, self._allowed)
            self._allowed -= granted
            return granted


class PacedFile:
    """A binary file whose ``write`` goes piece by piece, as ``pace`` allows (what
    ``torch.save`` writes to); each piece goes on to the disk as it is written
    (:class:`~.disk_writeback.DiskWriteback`)."""

    def __init__(self, file: IO[bytes], pace: WritePace) -> None:
        self._file = file
        self._pace = pace
        self._writeback = DiskWriteback.of(file, PIECE_BYTES)

    def write(self, data: bytes | bytearray | memoryview) -> int:
        view = memoryview(data).cast("B")
        start = 0
        while start < len(view):
            granted = self._pace.take(min(PIECE_BYTES, len(view) - start))
            self._file.write(view[start : start + granted])
            start += granted
            if self._writeback is not None:
                # Once the training thread waits for the write, the disk is not waited for.
                self._writeback.advance(granted, drop=not self._pace.released)
        return len(view)

    def finish(self) -> None:
        """The last byte was written: its disk write starts (before the file is closed)."""
        if self._writeback is not None:
            self._writeback.finish()

    def flush(self) -> None:
        self._file.flush()


@contextmanager
def pacing(pace: WritePace | None) -> Iterator[None]:
    """Within the block, this thread's checkpoint writes go at ``pace`` (None: at once)."""
    previous = getattr(_current, "pace", None)
    _current.pace = pace
    try:
        yield
    finally:
        _current.pace = previous


def current_pace() -> WritePace | None:
    """The pace this thread's checkpoint writes go at (None: no pacing)."""
    return getattr(_current, "pace", None)
