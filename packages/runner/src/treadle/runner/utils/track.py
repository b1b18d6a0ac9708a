"""Run a function over tasks with a progress bar: in this process, as an iterator, or in a pool
of worker processes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, TextIO

from .errors import UtilsTypeError
from .progress_bar import ProgressBar


def split_tasks(tasks: Any) -> tuple[Iterable, int]:
    """The tasks and their number from a sequence, or from a ``(iterable, number)`` tuple."""
    if isinstance(tasks, tuple):
        if len(tasks) != 2 or not isinstance(tasks[0], Iterable) or not isinstance(tasks[1], int):
            # Also the AssertionError MMEngine raises here.
            raise UtilsTypeError(
                "a tuple `tasks` must be (iterable of tasks, number of tasks), got a tuple of "
                f"{len(tasks)}: {tasks!r:.80}; pass a list to give the tasks themselves"
            )
        return tasks
    if isinstance(tasks, Sequence):
        return tasks, len(tasks)
    raise TypeError(
        '"tasks" must be a sequence or a tuple (iterable of tasks, number of tasks), got '
        f"{type(tasks).__name__}"
    )


def track_progress(
    func: Callable,
    tasks: Sequence | tuple[Iterable, int],
    bar_width: int = 50,
    file: TextIO | None = None,
    **kwargs: Any,
) -> list:
    """``[func(task, **kwargs) for task in tasks]`` with a progress bar on ``file`` (stdout).

    ``tasks`` is a sequence, or a tuple ``(iterable, number_of_tasks)`` for an iterator.

    Example:
        >>> track_progress(lambda x, step: x * step, [1, 2, 3], step=10)  # doctest: +SKIP
        [10, 20, 30]
    """
    tasks, task_num = split_tasks(tasks)
    bar = ProgressBar(task_num, bar_width, file=file)
    results = []
    try:
        for task in tasks:
            results.append(func(task, **kwargs))
            bar.update()
    finally:  # a terminal bar gives the cursor back even when a task raises
        bar.close()
    return results


def track_iter_progress(
    tasks: Sequence | tuple[Iterable, int],
    bar_width: int = 50,
    file: TextIO | None = None,
    *,
    force_terminal: bool | None = None,
) -> Iterator:
    """Yield the tasks one by one, advancing a progress bar as the loop goes.

    Example:
        >>> for image in track_iter_progress(images):  # doctest: +SKIP
        ...     process(image)
    """
    tasks, task_num = split_tasks(tasks)
    bar = ProgressBar(task_num, bar_width, file=file, force_terminal=force_terminal)
    try:
        for task in tasks:
            yield task
            bar.update()
    finally:  # also when the loop stops early
        bar.close()


def track_parallel_progress(
    func: Callable,
    tasks: Sequence | tuple[Iterable, int],
    nproc: int,
    initializer: Callable | None = None,
    initargs: tuple | None = None,
    bar_width: int = 50,
    chunksize: int = 1,
    skip_first: bool = False,
    keep_order: bool = True,
    file: TextIO | None = None,
    *,
    force_terminal: bool | None = None,
) -> list:
    """``[func(task) for task in tasks]`` computed by ``nproc`` worker processes, with a
    progress bar.

    ``initializer(*initargs)`` runs once in each worker; ``chunksize`` tasks are sent to a worker
    at a time; ``skip_first`` leaves the first ``nproc * chunksize`` results (which wait for the
    workers to start) out of the bar and its speed; ``keep_order=False`` returns results as they
    finish. ``func`` and the tasks must be picklable (a module-level function).

    Example:
        >>> track_parallel_progress(math.sqrt, [1, 4, 9], nproc=2)  # doctest: +SKIP
        [1.0, 2.0, 3.0]
    """
    if not isinstance(nproc, int) or nproc <= 0:
        raise ValueError(f"nproc must be a positive int (worker processes), got {nproc!r}")
    if not isinstance(chunksize, int) or chunksize <= 0:
        raise ValueError(f"chunksize must be a positive int, got {chunksize!r}")
    tasks, task_num = split_tasks(tasks)
    skipped = nproc * chunksize if skip_first else 0
    bar = ProgressBar(
        max(task_num - skipped, 0),
        bar_width,
        start=not skip_first,
        file=file,
        force_terminal=force_terminal,
    )
    from multiprocessing import Pool  # sockets and pickle: loaded when a pool is used

    results = []
    pool = Pool(nproc, initializer, initargs or ())
    try:
        mapping = pool.imap if keep_order else pool.imap_unordered
        for result in mapping(func, tasks, chunksize):
            results.append(result)
            if len(results) <= skipped:
                if len(results) == skipped:
                    bar.start()  # the clock starts once every worker is up
                continue
            bar.update()
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()
        bar.close()
    return results
