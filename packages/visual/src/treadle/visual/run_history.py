"""One history across resumes: the scalars of a run and of the runs it resumed from.

A resumed run writes its scalars to a folder of its own (``WORK_DIR/TIMESTAMP/vis_data``), so
its ``scalars.json`` starts at the iteration it resumed from. The runner records, beside it, in
``resumed_from.json``, which run it continued and at which iteration the checkpoint was taken::

    {"run": "../../20240131_120000", "run_abs": "/work/exp/20240131_120000",
     "iter": 450, "epoch": 10, "checkpoint": "../../epoch_10.pth"}

``run`` is relative to the folder of the record, so a work dir that is moved or copied whole
keeps its history; ``run_abs`` is tried when the relative path leads nowhere. :func:`read_history`
follows these records back from the newest run, however many times it was resumed, and joins
the runs on the iteration axis. Each earlier run contributes its lines up to the iteration of the
checkpoint the next run resumed (its file is read up to the first line past it): what it logged
after that checkpoint was done again by the resumed run, and is drawn once, from there.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from treadle.fileio import atomic_write

from .scalars_file import SCALARS_FILE, FoundScalars, ScalarSeries, find_scalars_file, read_scalars

__all__ = [
    "RESUME_RECORD",
    "History",
    "HistoryRun",
    "ResumeRecord",
    "read_history",
    "read_resume_record",
    "write_resume_record",
]

RESUME_RECORD = "resumed_from.json"
"""The record a resumed run writes beside its scalars.json."""


@dataclass(frozen=True)
class ResumeRecord:
    """What ``resumed_from.json`` says: the run continued, and where.

    Attributes:
        run: The earlier run's folder (its log dir), relative to the record's folder.
        iteration: The iteration the resumed checkpoint was taken at (its ``meta['iter']``):
            the earlier run's lines up to it belong to the history.
        run_abs: The same folder as an absolute path, for when ``run`` leads nowhere.
        epoch: The checkpoint's epoch, for the reader.
        checkpoint: The checkpoint resumed (relative to the record's folder, or a URL).

    Example:
        >>> read_resume_record('work/20240201_080000/vis_data')  # doctest: +SKIP
        ResumeRecord(run='../../20240131_120000', iteration=450, run_abs='/work/...', ...)
    """

    run: str
    iteration: int
    run_abs: str | None = None
    epoch: int | None = None
    checkpoint: str | None = None


def write_resume_record(
    vis_dir: str | os.PathLike,
    earlier_run: str | os.PathLike,
    iteration: int,
    *,
    epoch: int | None = None,
    checkpoint: str | os.PathLike | None = None,
) -> Path:
    """Write ``vis_dir/resumed_from.json``: the run in ``vis_dir`` continues ``earlier_run`` (a
    run folder, WORK_DIR/TIMESTAMP) from the checkpoint taken at ``iteration``. Atomic.

    Example:
        >>> write_resume_record('work/20240201_080000/vis_data', 'work/20240131_120000', 450)
        ... # doctest: +SKIP
        PosixPath('work/20240201_080000/vis_data/resumed_from.json')
    """
    vis_dir = Path(vis_dir).absolute()
    earlier = Path(earlier_run).absolute()
    record = {
        "run": _relative(earlier, vis_dir),
        "run_abs": os.fspath(earlier),
        "iter": int(iteration),
    }
    if epoch is not None:
        record["epoch"] = int(epoch)
    if checkpoint is not None:
        checkpoint = os.fspath(checkpoint)
        remote = "://" in checkpoint or "::" in checkpoint
        if not remote:
            checkpoint = _relative(Path(checkpoint).absolute(), vis_dir)
        record["checkpoint"] = checkpoint
    vis_dir.mkdir(parents=True, exist_ok=True)
    target = vis_dir / RESUME_RECORD
    atomic_write(target, (json.dumps(record) + "\n").encode("utf-8"))
    return target


def read_resume_record(vis_dir: str | os.PathLike) -> ResumeRecord | None:
    """The record in ``vis_dir``, or None when the run there was not resumed. A record that is
    not what :func:`write_resume_record` writes raises ValueError naming the file."""
    path = Path(vis_dir) / RESUME_RECORD
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ResumeRecord(
            run=str(data["run"]),
            iteration=int(data["iter"]),
            run_abs=data.get("run_abs"),
            epoch=data.get("epoch"),
            checkpoint=data.get("checkpoint"),
        )
    except (ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{path}: not a record of the run this one resumed from ({type(error).__name__}: "
            f"{error}); expected a JSON object with 'run' and 'iter'"
        ) from None


@dataclass
class HistoryRun:
    """One run of a history, and how much of it is drawn.

    Attributes:
        run_dir: The run's folder (holding ``vis_data/``).
        scalars: Its scalars.json, or None when it wrote none (it crashed before its first
            write, and only passes the history on).
        up_to: Its lines are read up to this iteration (the checkpoint the next run resumed);
            None for the newest run, which is read whole.

    Example:
        >>> [(run.run_dir.name, run.up_to) for run in read_history('work').runs]  # doctest: +SKIP
        [('20240131_120000', 450), ('20240201_080000', None)]
    """

    run_dir: Path
    scalars: Path | None
    up_to: int | None = None


@dataclass
class History:
    """The scalars of a run and of the runs it resumed from, joined on the iteration axis.

    Attributes:
        series: One series per key, oldest run first (as :func:`read_scalars` gives them).
        runs: The runs, oldest first; the last is the one asked for.
        found: How the newest run's scalars.json was found (shown to the user).
        broken: Why the chain stops early (an earlier run's folder is missing), or None.

    Example:
        >>> history = read_history('work_dirs/digits')  # doctest: +SKIP
        >>> history.series['loss'].iteration_axis()[:3], history.resume_points  # doctest: +SKIP
        ([1, 2, 3], [45, 135])
    """

    series: dict[str, ScalarSeries]
    runs: list[HistoryRun]
    found: FoundScalars
    broken: str | None = None
    resume_points: list[int] = field(default_factory=list)
    """The iterations at which a run of the history was resumed, in order."""

    def summary(self) -> str:
        """One line per earlier run, what ``treadle plot`` prints; empty for a single run."""
        lines = [
            f"with {run.scalars or run.run_dir} up to iteration {run.up_to} (resumed from there)"
            for run in self.runs[:-1]
        ]
        if self.broken:
            lines.append(f"history stops: {self.broken}")
        return "\n".join(lines)


def read_history(path: str | os.PathLike, single_run: bool = False) -> History:
    """The history of the run whose scalars ``path`` names (a scalars.json, or a work dir: see
    :func:`find_scalars_file`): its own series, preceded by those of every run it resumed
    from, each up to the iteration of the checkpoint resumed. ``single_run`` reads the newest
    run alone. An earlier run that cannot be found ends the history there, with a warning.

    Example:
        >>> history = read_history('work_dirs/digits')  # doctest: +SKIP
        >>> [run.up_to for run in history.runs]  # doctest: +SKIP
        [45, 90, None]
    """
    found = find_scalars_file(path)
    runs = [HistoryRun(_run_dir_of(found.path.parent), found.path)]
    broken = None
    if not single_run:
        broken = _follow_records(found.path.parent, runs)
    runs.reverse()
    series: dict[str, ScalarSeries] = {}
    for run in runs:
        if run.scalars is None:
            continue
        for key, part in read_scalars(run.scalars, up_to=run.up_to).items():
            merged = series.setdefault(key, ScalarSeries())
            merged.steps.extend(part.steps)
            merged.values.extend(part.values)
            merged.iterations.extend(part.iteration_axis())
            merged.has_iterations = merged.has_iterations or part.has_iterations
    points = [run.up_to for run in runs[:-1] if run.up_to is not None]
    return History(series, runs, found, broken, points)


def _follow_records(vis_dir: Path, runs: list[HistoryRun]) -> str | None:
    """Append to ``runs`` (newest first) every run the records lead back to; return why the
    chain ended early, or None."""
    seen = {vis_dir.resolve()}
    up_to = math.inf
    while (record := read_resume_record(vis_dir)) is not None:
        up_to = min(up_to, record.iteration)
        run_dir = _located(vis_dir, record)
        if run_dir is None:
            broken = (
                f"{vis_dir / RESUME_RECORD} says this run resumed from {record.run} at "
                f"iteration {record.iteration}, but that folder is not there (nor "
                f"{record.run_abs}); the curves start where this run resumed"
            )
            warnings.warn(broken, UserWarning, stacklevel=3)
            return broken
        earlier_vis = _vis_dir_of(run_dir)
        if earlier_vis.resolve() in seen:
            broken = f"{vis_dir / RESUME_RECORD} leads back to a run already read ({run_dir})"
            warnings.warn(broken, UserWarning, stacklevel=3)
            return broken
        seen.add(earlier_vis.resolve())
        scalars = earlier_vis / SCALARS_FILE
        runs.append(HistoryRun(run_dir, scalars if scalars.is_file() else None, int(up_to)))
        vis_dir = earlier_vis
    return None


def _located(vis_dir: Path, record: ResumeRecord) -> Path | None:
    for candidate in (vis_dir / record.run, record.run_abs):
        if candidate is not None and Path(candidate).is_dir():
            return Path(os.path.normpath(Path(candidate).absolute()))
    return None


def _vis_dir_of(run_dir: Path) -> Path:
    """Where a run folder keeps its scalars (and record): ``vis_data/`` in MMEngine's layout."""
    for candidate in (run_dir / "vis_data", run_dir):
        if (candidate / SCALARS_FILE).is_file() or (candidate / RESUME_RECORD).is_file():
            return candidate
    try:
        return find_scalars_file(run_dir).path.parent
    except FileNotFoundError:
        return run_dir / "vis_data"


def _run_dir_of(vis_dir: Path) -> Path:
    return vis_dir.parent if vis_dir.name == "vis_data" else vis_dir


def _relative(path: Path, start: Path) -> str:
    try:
        return os.path.relpath(path, start)
    except ValueError:  # another drive (Windows): only the absolute path can say it
        return os.fspath(path)
