"""Find and read the ``scalars.json`` files ``LocalVisBackend`` writes.

Each line of the file is one JSON object: the scalars of one ``add_scalars`` call, its
``step`` and, in lines a runner wrote, the training iteration ``iter``. Reading it gives one
series per key, with the steps (and iterations) of the lines that hold that key: validation
metrics logged once per epoch form their own short series next to the training losses logged
every few iterations, and their iterations put both on one axis.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["FoundScalars", "ScalarSeries", "find_scalars_file", "read_scalars"]

SCALARS_FILE = "scalars.json"


ITER_KEY = "iter"
"""The training iteration of a line (LoggerHook writes it in train and validation lines)."""


@dataclass
class ScalarSeries:
    """The values of one key and the steps they were logged at, in file order.

    ``iterations`` holds each value's training iteration: its line's ``iter`` when the line
    has one, else its ``step``; ``has_iterations`` says whether any line had one.
    """

    steps: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    iterations: list[float] = field(default_factory=list)
    has_iterations: bool = False

    def iteration_axis(self) -> list[float]:
        """The x of each value on the iteration axis (the steps for series built by hand)."""
        return self.iterations if len(self.iterations) == len(self.values) else self.steps


@dataclass
class FoundScalars:
    """The file ``find_scalars_file`` chose, and why (shown to the user)."""

    path: Path
    reason: str


def find_scalars_file(path: str | os.PathLike) -> FoundScalars:
    """The scalars file ``path`` names: the file itself, or the newest one under a work dir.

    A directory is searched in this order: ``scalars.json`` in it, ``vis_data/scalars.json``,
    then MMEngine's layout ``*/vis_data/scalars.json`` (one timestamped folder per run; the most
    recently modified file wins), then any ``scalars.json`` below it (the newest wins).

    Example:
        >>> find_scalars_file('work_dirs/resnet').path  # doctest: +SKIP
        PosixPath('work_dirs/resnet/20240131_120000/vis_data/scalars.json')
    """
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"no such file or directory: {os.fspath(path)!r}")
    if root.is_file():
        return FoundScalars(root, "the file given")
    for relative in (SCALARS_FILE, f"vis_data/{SCALARS_FILE}"):
        if (root / relative).is_file():
            return FoundScalars(root / relative, f"{relative} in {root}")
    for pattern in (f"*/vis_data/{SCALARS_FILE}", f"**/{SCALARS_FILE}"):
        found = [candidate for candidate in root.glob(pattern) if candidate.is_file()]
        if found:
            newest = max(found, key=lambda candidate: (candidate.stat().st_mtime, str(candidate)))
            if len(found) == 1:
                return FoundScalars(newest, f"the only one under {root}")
            return FoundScalars(newest, f"the newest of {len(found)} under {root}")
    raise FileNotFoundError(
        f"no {SCALARS_FILE} under {os.fspath(path)!r}: expected WORK_DIR/TIMESTAMP/vis_data/"
        f"{SCALARS_FILE} (written by LocalVisBackend) or the path of a {SCALARS_FILE} file"
    )


def read_scalars(path: str | os.PathLike, up_to: float | None = None) -> dict[str, ScalarSeries]:
    """Every key of the file with a numeric value, as a series over ``step`` (and ``iter``,
    see :class:`ScalarSeries`), in the order the keys first appear.

    ``up_to`` reads the file only up to the first line whose iteration (its ``iter``, else its
    ``step``) is past it: the lines a run logged before a checkpoint taken at that iteration
    (validation results logged by epoch after it included), not those it logged after.

    Values that are not numbers (strings, lists, booleans) are skipped; NaN and infinities
    become NaN, which plots as a gap. A line that is not a JSON object with a numeric ``step``
    raises ValueError naming the file and line; blank lines are skipped. A last line cut short
    (no newline, not valid JSON: the writing process died mid-write, or is still writing) is
    skipped with a warning, so a crashed run can still be plotted.

    Example:
        >>> read_scalars('vis_data/scalars.json')['loss'].values[:2]  # doctest: +SKIP
        [2.31, 2.05]
    """
    series: dict[str, ScalarSeries] = {}
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, start=1):
            if not line.strip():
                continue
            if not line.endswith("\n") and not _is_json(line):  # only the last line can
                warnings.warn(
                    f"{os.fspath(path)}:{number}: skipped the last line, cut short: "
                    f"{_shorten(line)}",
                    stacklevel=2,
                )
                break
            record = _parse_line(line, path, number)
            step = record.get("step")
            if not _is_number(step):
                raise ValueError(
                    f"{os.fspath(path)}:{number}: the line has no numeric 'step' (got {step!r})"
                )
            iteration = record.get(ITER_KEY)
            has_iteration = _is_number(iteration)
            if up_to is not None and (iteration if has_iteration else step) > up_to:
                break  # logged after the checkpoint at up_to: superseded by a resumed run
            for key, value in record.items():
                if _is_number(value):
                    entry = series.setdefault(key, ScalarSeries())
                    entry.steps.append(step)
                    entry.values.append(value if math.isfinite(value) else math.nan)
                    entry.iterations.append(iteration if has_iteration else step)
                    entry.has_iterations = entry.has_iterations or has_iteration
    return series


def _parse_line(line: str, path: str | os.PathLike, number: int) -> dict:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(
            f"{os.fspath(path)}:{number}: malformed JSON ({error.msg} at column {error.colno}): "
            f"{_shorten(line)}"
        ) from None
    if not isinstance(record, dict):
        raise ValueError(
            f"{os.fspath(path)}:{number}: expected a JSON object per line, got "
            f"{type(record).__name__}: {_shorten(line)}"
        )
    return record


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except json.JSONDecodeError:
        return False
    return True


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _shorten(line: str) -> str:
    line = line.strip()
    return line if len(line) <= 80 else line[:77] + "..."
