"""ProgressBar and the track_* functions: plain lines when the output is not a terminal, a live
rich bar when it is (forced with force_terminal, or a file that says it is a TTY)."""

from __future__ import annotations

import io
import math
import os

import pytest

from treadle.runner.utils import (
    ProgressBar,
    track_iter_progress,
    track_parallel_progress,
    track_progress,
    track_progress_rich,
)

ESCAPE = "\x1b["


class TerminalOutput(io.StringIO):
    """What a terminal looks like to rich and to treadle: isatty() is True."""

    def isatty(self) -> bool:
        return True


def plain_lines(output: io.StringIO) -> list[str]:
    text = output.getvalue()
    assert ESCAPE not in text and "\r" not in text
    return text.splitlines()


def test_progress_bar_writes_a_few_plain_lines_off_a_terminal():
    output = io.StringIO()
    bar = ProgressBar(1000, file=output)
    for _ in range(1000):
        bar.update()
    assert bar.completed == 1000
    lines = plain_lines(output)
    assert len(lines) == 11  # the start, then each tenth
    assert lines[0].startswith("[" + " " * 50 + "] 0/1000")
    assert lines[5].startswith("[" + ">" * 25 + " " * 25 + "] 500/1000")
    assert lines[-1].startswith("[" + ">" * 50 + "] 1000/1000, ")
    assert "task/s, elapsed: " in lines[-1] and "ETA: 0s" in lines[-1]


def test_progress_bar_with_fewer_tasks_than_tenths_writes_each_one():
    output = io.StringIO()
    bar = ProgressBar(3, bar_width=6, file=output)
    for _ in range(3):
        bar.update()
    assert [line.split(",")[0] for line in plain_lines(output)] == [
        "[      ] 0/3",
        "[>>    ] 1/3",
        "[>>>>  ] 2/3",
        "[>>>>>>] 3/3",
    ]


def test_progress_bar_of_unknown_length_writes_when_the_count_doubles():
    output = io.StringIO()
    bar = ProgressBar(file=output)
    for _ in range(10):
        bar.update(num_tasks=2)
    bar.finish()
    counts = [line.split(",")[0] for line in plain_lines(output)]
    assert counts == [f"completed: {n}" for n in (0, 2, 4, 8, 16, 20)]
    assert bar.completed == 20


def test_progress_bar_start_later():
    output = io.StringIO()
    bar = ProgressBar(2, file=output, start=False)
    assert output.getvalue() == ""
    bar.start()
    assert plain_lines(output)[0].startswith("[")
    bar.update(2)
    assert plain_lines(output)[-1].split(",")[0].endswith("2/2")


def test_progress_bar_draws_a_rich_bar_on_a_terminal():
    output = io.StringIO()
    bar = ProgressBar(4, file=output, force_terminal=True)
    for _ in range(4):
        bar.update()
    text = output.getvalue()
    assert ESCAPE in text and "4/4" in text and "100%" in text
    assert text.endswith("\n" + ESCAPE + "?25h")  # the cursor is shown again at the end


def test_progress_bar_forced_plain_on_a_terminal():
    output = TerminalOutput()
    bar = ProgressBar(2, file=output, force_terminal=False)
    bar.update(2)
    assert len(plain_lines(output)) == 2


def test_track_progress_passes_keyword_arguments_and_keeps_order():
    output = io.StringIO()
    assert track_progress(lambda x, step: x * step, [1, 2, 3], file=output, step=10) == [10, 20, 30]
    assert plain_lines(output)[-1].split(",")[0].endswith("3/3")


def test_track_progress_over_an_iterator_with_its_length():
    output = io.StringIO()
    assert track_progress(str.upper, (iter("ab"), 2), file=output) == ["A", "B"]
    assert plain_lines(output)[-1].split(",")[0].endswith("2/2")


def test_track_progress_on_a_terminal():
    output = TerminalOutput()
    assert track_progress(abs, [-1, -2], file=output) == [1, 2]
    assert ESCAPE in output.getvalue() and "2/2" in output.getvalue()


def test_track_progress_writes_to_stdout_by_default(capsys):
    track_progress(abs, [-1])
    assert capsys.readouterr().out.splitlines()[-1].split(",")[0].endswith("1/1")


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        (
            5,
            r'"tasks" must be a sequence or a tuple \(iterable of tasks, .*\), got int',
        ),
        (
            (1, 2, 3),
            "a tuple `tasks` must be \\(iterable of tasks, number of tasks\\), got a tuple of 3",
        ),
        ((iter([1]), "1"), "a tuple `tasks` must be"),
    ],
)
def test_track_progress_refuses_odd_tasks(tasks, message):
    with pytest.raises(TypeError, match=message):
        track_progress(abs, tasks, file=io.StringIO())


def test_a_bad_tasks_tuple_is_also_mmengine_assertion_error():
    with pytest.raises(AssertionError, match="a tuple `tasks` must be"):
        track_progress(abs, (1, 2, 3), file=io.StringIO())


def test_track_iter_progress_yields_each_task():
    output = io.StringIO()
    assert list(track_iter_progress([1, 2, 3], file=output)) == [1, 2, 3]
    assert plain_lines(output)[-1].split(",")[0].endswith("3/3")
    terminal = io.StringIO()
    assert list(track_iter_progress((iter("ab"), 2), file=terminal, force_terminal=True)) == [
        "a",
        "b",
    ]
    assert ESCAPE in terminal.getvalue()


def test_track_parallel_progress_keeps_order():
    output = io.StringIO()
    assert track_parallel_progress(math.sqrt, [1, 4, 9, 16], 2, file=output) == [1, 2, 3, 4]
    assert plain_lines(output)[-1].split(",")[0].endswith("4/4")


def test_track_parallel_progress_unordered_and_in_chunks():
    output = io.StringIO()
    tasks = list(range(-20, 0))
    results = track_parallel_progress(abs, tasks, 2, chunksize=3, keep_order=False, file=output)
    assert sorted(results) == list(range(1, 21))


def test_track_parallel_progress_skip_first_leaves_startup_out_of_the_bar():
    output = io.StringIO()
    assert track_parallel_progress(abs, [-1, -2, -3, -4], 2, skip_first=True, file=output) == [
        1,
        2,
        3,
        4,
    ]
    counts = [line.split("]")[1].split(",")[0].strip() for line in plain_lines(output)]
    assert counts == ["0/2", "1/2", "2/2"]


def test_track_parallel_progress_runs_the_initializer_in_each_worker(tmp_path):
    # each worker moves to tmp_path first; this process stays where it is
    results = track_parallel_progress(
        os.path.abspath,
        ["a", "b"],
        2,
        initializer=os.chdir,
        initargs=(str(tmp_path),),
        file=io.StringIO(),
    )
    assert results == [str(tmp_path / "a"), str(tmp_path / "b")]
    assert os.getcwd() != str(tmp_path)


def test_track_parallel_progress_on_a_terminal():
    output = io.StringIO()
    assert track_parallel_progress(abs, [-1, -2], 2, file=output, force_terminal=True) == [1, 2]
    assert ESCAPE in output.getvalue() and "2/2" in output.getvalue()


def test_track_parallel_progress_raises_what_a_task_raised():
    with pytest.raises(ValueError, match="math domain error"):
        track_parallel_progress(math.sqrt, [4, -1], 2, file=io.StringIO())


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(nproc=0), ValueError, "nproc must be a positive int \\(worker processes\\), got 0"),
        (dict(nproc=2, chunksize=0), ValueError, "chunksize must be a positive int, got 0"),
        (dict(nproc=2, tasks=7), TypeError, '"tasks" must be a sequence'),
    ],
)
def test_track_parallel_progress_errors(kwargs, error, message):
    kwargs = {"tasks": [1], **kwargs}
    with pytest.raises(error, match=message):
        track_parallel_progress(abs, file=io.StringIO(), **kwargs)


def test_track_progress_rich_spreads_tuples_and_lists_as_arguments():
    output = io.StringIO()
    assert track_progress_rich(pow, [(2, 3), [3, 2], (2, 0)], file=output) == [8, 9, 1]
    lines = plain_lines(output)
    assert lines[0].startswith("Processing: [") and lines[-1].split(",")[0].endswith("3/3")


def test_track_progress_rich_in_worker_processes():
    output = io.StringIO()
    tasks = [(n, 2) for n in range(10)]
    assert track_progress_rich(pow, tasks, nproc=2, chunksize=2, file=output) == [
        n**2 for n in range(10)
    ]


def test_track_progress_rich_calls_without_arguments_task_num_times():
    assert track_progress_rich(dict, task_num=3, file=io.StringIO()) == [{}, {}, {}]
    assert track_progress_rich(dict, task_num=0, file=io.StringIO()) == []


def test_track_progress_rich_over_an_iterator_of_unknown_length():
    output = io.StringIO()
    assert track_progress_rich(abs, iter([-1, -2, -3]), description="Abs", file=output) == [1, 2, 3]
    assert plain_lines(output)[-1].startswith("Abs: completed: 3")


def test_track_progress_rich_draws_its_colour_and_description_on_a_terminal():
    output = io.StringIO()
    track_progress_rich(
        abs, [-1, -2], description="Scoring", color="red", file=output, force_terminal=True
    )
    text = output.getvalue()
    assert "\x1b[31mScoring" in text and "2/2" in text and "100%" in text


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(tasks=[]), ValueError, "tasks is empty and task_num is not set"),
        (
            dict(tasks=[1], task_num=2),
            ValueError,
            "task_num does not match the length of tasks: task_num=2, len\\(tasks\\)=1",
        ),
        (dict(tasks=5), TypeError, "tasks must be an iterable object, got int"),
        (dict(tasks=[1], nproc=0), ValueError, "nproc must be a positive number, got 0"),
        (dict(tasks=[1], chunksize=0), ValueError, "chunksize must be a positive int, got 0"),
    ],
)
def test_track_progress_rich_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        track_progress_rich(abs, file=io.StringIO(), **kwargs)
