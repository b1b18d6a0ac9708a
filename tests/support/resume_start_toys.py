"""Toys for the tests of part RESUME (tests/runner/test_resume_start*.py): a data set that
writes down every item it loads, and a hook that notes how many had been loaded when the first
training iteration of a run began.

The read log is a file (one index a line, appended), not a counter in memory, so that reads
made in DataLoader worker processes count too.

Importing this module registers, under names that say where they come from:

- DATASETS: ``ResumeStartReadLogDataset`` (``RunnerToyDataset`` whose ``__getitem__`` appends
  the index to ``read_log``);
- HOOKS: ``ResumeStartFirstIterMark`` (the number of reads in the log at the first
  ``before_train_iter`` of the run, with the iteration it trained).

Example:
    >>> import tempfile, os
    >>> log = os.path.join(tempfile.mkdtemp(), 'reads.log')
    >>> dataset = ReadLogDataset(read_log=log, length=4)
    >>> _ = dataset[2], dataset[3]
    >>> read_indices(log)
    [2, 3]
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from runner_toy_model import ToyDataset

from treadle.runner.hooks import Hook
from treadle.runner.registry import DATASETS, HOOKS


def read_indices(read_log: str | os.PathLike) -> list[int]:
    """The indices loaded so far, in the order the log received them (empty: no file)."""
    path = Path(read_log)
    if not path.exists():
        return []
    return [int(line) for line in path.read_text().split()]


@DATASETS.register_module(name="ResumeStartReadLogDataset", force=True)
class ReadLogDataset(ToyDataset):
    """``RunnerToyDataset`` that appends the index of every item it loads to ``read_log``.

    Args:
        read_log: the file the indices go to (created on the first read).
        length: how many samples.

    Example:
        >>> dataset = ReadLogDataset(read_log='/tmp/reads.log', length=6)
        >>> len(dataset)
        6
    """

    def __init__(self, read_log: str, length: int = 12, seed: int = 0) -> None:
        super().__init__(length=length, seed=seed)
        self.read_log = str(read_log)

    def __getitem__(self, index: int) -> dict[str, Any]:
        # One write(2) with O_APPEND per read: the workers' lines never interleave.
        fd = os.open(self.read_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, f"{int(index)}\n".encode())
        finally:
            os.close(fd)
        return super().__getitem__(index)


@HOOKS.register_module(name="ResumeStartFirstIterMark", force=True)
class FirstIterMark(Hook):
    """Notes, at the first ``before_train_iter`` of the run, how many items the read log
    holds (``reads``) and which iteration is about to be trained (``iteration``).

    Its instances are kept in ``FirstIterMark.marks`` (a config builds it by name, and the test
    reads it back from there).

    Example:
        >>> mark = FirstIterMark(read_log='/tmp/reads.log')
        >>> mark.reads is None
        True
    """

    priority = "VERY_HIGH"
    marks: list[FirstIterMark] = []  # noqa: RUF012 - shared on purpose: read by the tests

    def __init__(self, read_log: str) -> None:
        self.read_log = str(read_log)
        self.reads: int | None = None
        self.iteration: int | None = None
        FirstIterMark.marks.append(self)

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        if self.reads is None:
            self.reads = len(read_indices(self.read_log))
            self.iteration = runner.iter


__all__ = ["FirstIterMark", "ReadLogDataset", "read_indices"]
