"""``BufferedLineWriter``: append lines to a file cheaply, without losing them.

A training loop logs scalars every few iterations; opening the file and writing each line costs
far more than the line is worth (MMEngine reopens ``scalars.json`` on every call). Lines are
kept in memory instead and reach the file in one write:

- at the first write after ``flush_interval`` seconds,
- from a background thread once the oldest pending line is ``flush_interval`` seconds old, so
  they arrive even when the caller stops writing (a long validation, a hang),
- at ``flush()``/``close()``, when the writer is garbage collected, and at interpreter exit.

So a crash of the process (SIGKILL, ``os._exit``, a segfault) loses at most the lines of the
last ``flush_interval`` seconds. Writes go straight to the file descriptor (no Python-level file
buffer), appended in one ``write`` call each: a reader never sees half of a flush, and nothing
is fsynced, since the operating system keeps what was written when the process dies.

A forked child starts with an empty buffer and new locks: the parent's pending lines are the
parent's to write, and a lock some other thread held at the moment of the fork is not held in
the child. A forked child also writes each line at once instead of buffering it: children made
by ``multiprocessing`` (DataLoader workers) end with ``os._exit``, which runs no finalizer and
no atexit handler, so a buffered line would be lost.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
import weakref

__all__ = ["DEFAULT_FLUSH_INTERVAL", "BufferedLineWriter"]

DEFAULT_FLUSH_INTERVAL = 2.0
"""Seconds a line may wait in memory: small next to any training run, long enough that the
file is written a handful of times per minute at most."""


class _PendingLines:
    """The state a writer shares with its finalizer and the background flusher.

    It holds no reference to the ``BufferedLineWriter``, so the writer can be garbage collected
    (which flushes and closes this).
    """

    def __init__(self, path: str, flush_interval: float, write_through: bool = False) -> None:
        self.path = path
        self.interval = flush_interval
        # Unbuffered: each flush is one os.write of the joined lines (O_APPEND), with no
        # Python-level buffer that a fork or a finalizer could write a second time.
        self.file = open(path, "ab", buffering=0)  # noqa: SIM115 - closed by close()
        self.lines: list[str] = []
        self.due: float | None = None  # when the oldest pending line must be on disk
        self.closed = False
        self.write_through = write_through or _IN_FORKED_CHILD  # see forget_after_fork
        self._reset_locks()

    def _reset_locks(self) -> None:
        self.lock = threading.Lock()  # guards lines, due and closed: held for microseconds
        self.io_lock = threading.Lock()  # keeps flushes in order, and close after them

    def append(self, line: str) -> None:
        now = time.monotonic()
        with self.lock:
            if self.closed:
                raise ValueError(f"write to a closed BufferedLineWriter ({self.path})")
            self.lines.append(line)
            due = self.due
            if due is None:
                self.due = now + self.interval
        if self.write_through or (due is not None and now >= due):
            self.flush()
        elif due is None:
            _FLUSHER.wake()  # once per interval: the flusher now has a deadline to wait for

    def flush(self) -> None:
        with self.io_lock:
            self._write_pending()

    def close(self) -> None:
        with self.io_lock:
            if self.closed:
                return
            try:
                self._write_pending()
            finally:
                with self.lock:
                    self.closed = True
                self.file.close()

    def _write_pending(self) -> None:
        """Take the pending lines and write them; the caller holds ``io_lock``."""
        with self.lock:
            if not self.lines or self.closed:
                return
            data = "".join(self.lines).encode("utf-8")
            self.lines = []
            self.due = None
        view = memoryview(data)
        while view:  # a raw write may take only part of the data
            view = view[self.file.write(view) :]

    def forget_after_fork(self) -> None:
        """In a forked child: drop the parent's pending lines, take fresh locks, and write
        every later line at once (the child may end with ``os._exit``, which flushes nothing)."""
        self._reset_locks()
        self.lines = []
        self.due = None
        self.write_through = True


class _Flusher:
    """One daemon thread per process that flushes every writer whose oldest line is due.

    It starts with the first pending line of the process, and holds the writers' states only
    weakly, so that a collected writer is forgotten.
    """

    def __init__(self) -> None:
        self.pending: weakref.WeakSet[_PendingLines] = weakref.WeakSet()
        self._reset()

    def _reset(self) -> None:
        self.condition = threading.Condition(threading.Lock())
        self.thread: threading.Thread | None = None

    def watch(self, pending: _PendingLines) -> None:
        with self.condition:
            self.pending.add(pending)

    def wake(self) -> None:
        with self.condition:
            if self.thread is None:
                self.thread = threading.Thread(
                    target=self._run, name="treadle-visual-flusher", daemon=True
                )
                self.thread.start()
            self.condition.notify()

    def _run(self) -> None:
        while True:
            due_now = self._wait_for_due()
            _flush_each(due_now)
            del due_now  # no strong reference while the next wait sleeps

    def _wait_for_due(self) -> list[_PendingLines]:
        with self.condition:
            while True:
                now = time.monotonic()
                # Comprehensions, so that no strong reference outlives this pass: a writer
                # collected while the thread sleeps must disappear from the WeakSet.
                dues = [(due, item) for item in self.pending if (due := item.due) is not None]
                due_now = [item for due, item in dues if due <= now]
                if due_now:
                    return due_now
                soonest = min((due for due, _ in dues), default=None)
                del dues
                self.condition.wait(None if soonest is None else soonest - now)

    def after_fork_in_child(self) -> None:
        global _IN_FORKED_CHILD
        _IN_FORKED_CHILD = True  # writers opened in the child write through too
        self._reset()  # the thread did not survive the fork; the next wake() starts one
        for item in list(self.pending):
            item.forget_after_fork()


def _flush_each(due_now: list[_PendingLines]) -> None:
    for pending in due_now:
        try:
            pending.flush()
        except OSError as error:
            # Disk full, a removed directory: say so, and live on to flush the other writers.
            warnings.warn(
                f"could not write buffered lines to {pending.path}: {error}",
                RuntimeWarning,
                stacklevel=1,
            )


_IN_FORKED_CHILD = False
_FLUSHER = _Flusher()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_FLUSHER.after_fork_in_child)


class BufferedLineWriter:
    """Append text lines to ``path``, buffered in memory and flushed at intervals.

    Args:
        path: The file, opened in append mode (created if missing, never truncated).
        flush_interval: Seconds after which a pending line is written to the file, by the next
            ``write`` or by a background thread, whichever comes first.
        write_through: Write each line to the file at once instead (one ``write`` call each,
            the file kept open): for readers that expect a line there when ``write`` returns.

    Example:
        >>> writer = BufferedLineWriter('work/scalars.json', flush_interval=2.0)
        >>> writer.write('{"loss": 0.5, "step": 1}\\n')
        >>> writer.close()  # or let it be collected, or let the interpreter exit
    """

    def __init__(
        self,
        path: str | os.PathLike,
        flush_interval: float = DEFAULT_FLUSH_INTERVAL,
        write_through: bool = False,
    ):
        if not flush_interval > 0:
            raise ValueError(
                f"flush_interval must be a positive number of seconds, got {flush_interval!r}"
            )
        self._pending = _PendingLines(os.fspath(path), float(flush_interval), write_through)
        # Runs close() when the writer is collected and at interpreter exit (weakref.finalize
        # registers with atexit), without keeping the writer alive.
        self._finalizer = weakref.finalize(self, self._pending.close)
        _FLUSHER.watch(self._pending)

    @property
    def path(self) -> str:
        return self._pending.path

    @property
    def closed(self) -> bool:
        return self._pending.closed

    def write(self, line: str) -> None:
        """Queue ``line`` (its newline included) for the file."""
        self._pending.append(line)

    def flush(self) -> None:
        """Write every pending line to the file now."""
        self._pending.flush()

    def close(self) -> None:
        """Flush and close the file; later writes raise ValueError. Calling it again is a no-op."""
        self._finalizer()
