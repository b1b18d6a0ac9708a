"""Timer, TimerError and check_time."""

from __future__ import annotations

import time

import pytest

from treadle.runner.utils import Timer, TimerError, check_time


def test_timer_measures_since_start_and_since_last_check():
    timer = Timer()
    assert timer.is_running
    time.sleep(0.05)
    first = timer.since_last_check()
    assert first >= 0.05
    assert timer.since_last_check() < first  # counted from the previous check
    assert timer.since_start() >= 0.05


def test_a_timer_not_started_refuses_to_answer():
    timer = Timer(start=False)
    assert not timer.is_running
    with pytest.raises(TimerError, match="timer is not running: call start"):
        timer.since_start()
    with pytest.raises(TimerError, match="timer is not running") as raised:
        timer.since_last_check()
    assert "not running" in raised.value.message
    timer.start()
    assert timer.is_running


def test_timer_as_context_prints_the_time_of_its_block(capsys):
    with Timer(print_tmpl="took {:.1f} s") as timer:
        time.sleep(0.1)
    assert isinstance(timer, Timer)
    assert capsys.readouterr().out in ("took 0.1 s\n", "took 0.2 s\n")
    with Timer():
        pass
    printed = capsys.readouterr().out.strip()
    assert printed.startswith("0.0") and len(printed.split(".")[1]) == 3


def test_check_time_by_name():
    assert check_time("test_check_time_by_name") == 0
    time.sleep(0.02)
    assert check_time("test_check_time_by_name") >= 0.02
    assert check_time("test_check_time_by_name") < 0.02
    assert check_time(("another", 1)) == 0
