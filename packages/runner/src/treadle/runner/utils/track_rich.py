"""track_progress_rich: run a function over argument tuples with a coloured rich bar."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sized
from typing import Any, TextIO

from .progress_display import open_display


class _Call:
    """Call ``func`` with a task spread as arguments when it is a tuple or a list.
    A class, not a closure, so that worker processes can unpickle it."""

    def __init__(self, func: Callable) -> None:
        self.func = func

    def __call__(self, task: Any) -> Any:
        if isinstance(task, (tuple, list)):
            return self.func(*task)
        return self.func(task)


def _tasks_and_total(tasks: Iterable, task_num: int | None) -> tuple[Iterable, int | None]:
    if not isinstance(tasks, Iterable):
        raise TypeError(f"tasks must be an iterable object, got {type(tasks).__name__}")
    if not isinstance(tasks, Sized):
        return tasks, task_num  # an iterator: task_num, when given, is its length
    if len(tasks) == 0:
        if task_num is None:
            raise ValueError(
                "tasks is empty and task_num is not set: give the tasks, or task_num to call "
                "func that many times with no arguments"
            )
        return [()] * task_num, task_num
    if task_num is not None and task_num != len(tasks):
        raise ValueError(
            f"task_num does not match the length of tasks: task_num={task_num}, "
            f"len(tasks)={len(tasks)}"
        )
    return tasks, len(tasks)


def track_progress_rich(
    func: Callable,
    tasks: Iterable = (),
    task_num: int | None = None,
    nproc: int = 1,
    chunksize: int = 1,
    description: str = "Processing",
    color: str = "blue",
    *,
    file: TextIO | None = None,
    force_terminal: bool | None = None,
) -> list:
    """Call ``func`` on every task (a tuple or list task is spread as arguments) in this process
    or in ``nproc`` worker processes, with a rich progress bar; return the results in order.

    With no tasks and ``task_num`` set, ``func`` is called ``task_num`` times without arguments.
    Written to a file or a pipe, the bar becomes a few plain lines.

    Example:
        >>> track_progress_rich(pow, [(2, 3), (3, 2)], description='Powers')  # doctest: +SKIP
        [8, 9]
    """
    if not isinstance(nproc, int) or nproc <= 0:
        raise ValueError(f"nproc must be a positive number, got {nproc!r}")
    if not isinstance(chunksize, int) or chunksize <= 0:
        raise ValueError(f"chunksize must be a positive int, got {chunksize!r}")
    tasks, total = _tasks_and_total(tasks, task_num)
    display = open_display(
        total,
        file=file,
        description=str(description),
        color=str(color),
        force_terminal=force_terminal,
    )
    call = _Call(func)
    results: list = []
    try:
        if nproc == 1:
            for task in tasks:
                results.append(call(task))
                display.update(len(results))
        else:
            from multiprocessing import Pool  # loaded when a pool is used

            with Pool(nproc) as pool:
                for result in pool.imap(call, tasks, chunksize):
                    results.append(result)
                    display.update(len(results))
    finally:  # a terminal bar gives the cursor back even when a task raises
        display.finish(len(results))
    return results
