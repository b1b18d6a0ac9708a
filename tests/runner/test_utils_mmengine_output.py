"""What treadle.compat switches on in treadle.runner.utils so that MMEngine code reads what
MMEngine writes: ProgressBar's text (``ProgressBar.mmengine_format``), missing prerequisites
printed (``prerequisites.PRINT_MISSING``) and MMEngine's environment report
(``mmengine_env.MMENGINE_VERSION``)."""

from __future__ import annotations

import io
import sys

import pytest
import torch

from treadle.runner.runner.env import collect_env
from treadle.runner.utils import (
    ProgressBar,
    mmengine_env,
    prerequisites,
    requires_executable,
    requires_package,
    track_iter_progress,
    track_progress,
)


@pytest.fixture
def mmengine_format(monkeypatch):
    monkeypatch.setattr(ProgressBar, "mmengine_format", True)
    monkeypatch.setenv("COLUMNS", "80")


class Clock:
    """perf_counter for the MMEngine display: 0 at the start, then one second per update."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


@pytest.fixture
def clock(monkeypatch):
    from treadle.runner.utils import progress_mmengine

    fake = Clock()
    monkeypatch.setattr(progress_mmengine.time, "perf_counter", fake)
    return fake


def test_start_lines(mmengine_format):
    out = io.StringIO()
    ProgressBar(bar_width=20, file=out)
    assert out.getvalue() == "completed: 0, elapsed: 0s"
    out = io.StringIO()
    bar = ProgressBar(10, bar_width=20, start=False, file=out)
    assert out.getvalue() == ""
    bar.start()
    assert out.getvalue() == f"[{' ' * 20}] 0/10, elapsed: 0s, ETA:"


def test_update_lines(mmengine_format, clock):
    out = io.StringIO()
    bar = ProgressBar(bar_width=20, file=out)
    clock.now = 1.0
    bar.update()
    assert out.getvalue().endswith("completed: 1, elapsed: 1s, 1.0 tasks/s")
    out = io.StringIO()
    bar = ProgressBar(10, bar_width=20, file=out)
    out.truncate(0)
    out.seek(0)
    clock.now = 2.0  # one second after this bar started
    bar.update()
    assert out.getvalue() == f"\r[{'>' * 2 + ' ' * 18}] 1/10, 1.0 task/s, elapsed: 1s, ETA:     9s"


def test_the_bar_narrows_to_the_terminal(mmengine_format, clock, monkeypatch):
    out = io.StringIO()
    bar = ProgressBar(10, bar_width=20, file=out)
    clock.now = 1.0
    for columns, length in (("80", 66), ("30", 48), ("60", 60)):
        monkeypatch.setenv("COLUMNS", columns)
        out.truncate(0)
        out.seek(0)
        bar.update()
        assert len(out.getvalue()) == length


def test_track_functions_end_the_line(mmengine_format, clock):
    out = io.StringIO()
    assert track_progress(abs, [-1, -2], bar_width=2, file=out) == [1, 2]
    assert out.getvalue().startswith("[  ] 0/2, elapsed: 0s, ETA:\r[>")
    assert out.getvalue().endswith("2/2, inf task/s, elapsed: 0s, ETA:     0s\n")
    out = io.StringIO()
    assert list(track_iter_progress([1, 2, 3], bar_width=3, file=out)) == [1, 2, 3]
    assert out.getvalue().count("\n") == 1 and out.getvalue().endswith("\n")


def test_treadle_lines_by_default():
    out = io.StringIO()
    ProgressBar(file=out)
    assert out.getvalue().endswith("\n")  # whole lines, for logs


@pytest.mark.parametrize("printed", [False, True])
def test_missing_prerequisites_printed_as_mmengine_does(monkeypatch, capsys, printed):
    monkeypatch.setattr(prerequisites, "PRINT_MISSING", printed)

    @requires_package("no_pkg_xyz")
    def needs_package():
        return 1

    @requires_executable(["no_program_a", "no_program_b"])
    def needs_programs():
        return 1

    message = 'Prerequisites "no_pkg_xyz" are required in method "needs_package" but not found'
    with pytest.raises(RuntimeError, match=message):
        needs_package()
    assert capsys.readouterr().out == (
        f"{message}, please install them first.\n" if printed else ""
    )
    with pytest.raises(RuntimeError, match='"no_program_a, no_program_b" are required'):
        needs_programs()
    assert ("no_program_a, no_program_b" in capsys.readouterr().out) is printed


def test_collect_env_reports_mmengine_keys_under_compat(monkeypatch):
    monkeypatch.setattr(mmengine_env, "MMENGINE_VERSION", "0.10.7")
    info = collect_env()
    for key in ("sys.platform", "Python", "CUDA available", "PyTorch", "GCC", "MMEngine"):
        assert key in info
    assert info["PyTorch compiling details"] == torch.__config__.show()
    assert info["CUDA available"] is torch.cuda.is_available()  # a bool, as MMEngine's
    assert info["Python"] == sys.version.replace("\n", "")
    assert info["MMEngine"] == "0.10.7"
    monkeypatch.setattr(mmengine_env, "MMENGINE_VERSION", None)
    assert "treadle" in collect_env() and "MMEngine" not in collect_env()
