"""Wall-clock timers: a reusable Timer and ``check_time`` for ad-hoc measurements by name."""

from __future__ import annotations

import time
from typing import Any


class TimerError(Exception):
    """A timer was read before it was started."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class Timer:
    """Measure elapsed seconds since start and since the previous check.

    Used as a context manager it prints the time its block took with ``print_tmpl``
    ('{:.3f}' by default).

    Example:
        >>> timer = Timer()
        >>> load = timer.since_last_check()   # seconds since the timer started
        >>> step = timer.since_last_check()   # seconds since the line above
        >>> with Timer(print_tmpl='took {:.1f} s'):
        ...     pass
        took 0.0 s
    """

    def __init__(self, start: bool = True, print_tmpl: str | None = None) -> None:
        self._is_running = False
        self.print_tmpl = print_tmpl if print_tmpl else "{:.3f}"
        if start:
            self.start()

    @property
    def is_running(self) -> bool:
        """Whether the timer has been started."""
        return self._is_running

    def __enter__(self) -> Timer:
        self.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        print(self.print_tmpl.format(self.since_last_check()))
        self._is_running = False

    def start(self) -> None:
        """Start counting (again, when already started: the start time is kept)."""
        if not self._is_running:
            self._t_start = time.perf_counter()
            self._is_running = True
        self._t_last = time.perf_counter()

    def _check_running(self) -> None:
        if not self._is_running:
            raise TimerError("timer is not running: call start() (or Timer(start=True)) first")

    def since_start(self) -> float:
        """Seconds since the timer started; also counts as a check."""
        self._check_running()
        self._t_last = time.perf_counter()
        return self._t_last - self._t_start

    def since_last_check(self) -> float:
        """Seconds since the previous check (or the start)."""
        self._check_running()
        now = time.perf_counter()
        elapsed, self._t_last = now - self._t_last, now
        return elapsed


_timers: dict[Any, Timer] = {}


def check_time(timer_id: Any) -> float:
    """Seconds since the previous ``check_time`` with the same ``timer_id``; 0 the first time.

    Example:
        >>> for step in range(3):
        ...     print(f'{check_time("loading"):.0f}')   # 0, then the time of each loop
        0
        0
        0
    """
    timer = _timers.get(timer_id)
    if timer is None:
        _timers[timer_id] = Timer()
        return 0
    return timer.since_last_check()
