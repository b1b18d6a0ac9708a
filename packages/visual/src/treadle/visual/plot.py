"""Loss curves from ``scalars.json``: one panel per metric, drawn headless.

Every curve is drawn against the training iteration (each line's ``iter``, which LoggerHook
writes; the line's ``step`` where there is none), so the validation results a runner logs by
epoch line up with the training losses; a metric and its ``val/``/``test/`` twin share a panel,
and every panel spans the same iterations.

A resumed run is drawn with the runs it resumed from, as one history on the iteration axis
(:func:`.run_history.read_history`; a dotted line marks each resume); ``single_run=True``
draws the newest run alone.

``python -m treadle.visual plot WORK_DIR_OR_SCALARS_JSON`` calls :func:`plot_file`; the figure
itself comes from :func:`plot_scalars`, for notebooks and tests. The figure is a plain
``matplotlib.figure.Figure`` rendered by Agg: no pyplot, no display, no global backend switch.
"""

from __future__ import annotations

import difflib
import io
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from matplotlib.figure import Figure

from treadle.fileio import atomic_write

from .plot_panels import panel_groups
from .run_history import History, read_history
from .scalars_file import FoundScalars, ScalarSeries

__all__ = [
    "BOOKKEEPING_KEYS",
    "DEFAULT_OUT_NAME",
    "default_keys",
    "plot_file",
    "plot_scalars",
]

BOOKKEEPING_KEYS = frozenset({"step", "epoch", "iter", "iteration", "global_step"})
"""Counters, not measurements: left out of the default panels. A key is bookkeeping when its
last ``/``-separated part, lower-cased, is one of these (``step``, ``train/epoch``, ...)."""

DEFAULT_OUT_NAME = "curves.png"
"""The PNG's name when no ``--out`` is given; it goes next to the scalars file."""

PANEL_SIZE = (5.0, 3.0)  # inches per panel (width, height)
TITLE_HEIGHT = 0.4  # inches above the panels for the figure's title
DPI = 100
MAX_COLUMNS = 3
MARKER_LIMIT = 50  # series this short get a marker per point, so one point is still visible


def default_keys(series: Mapping[str, ScalarSeries]) -> list[str]:
    """The keys plotted when none are asked for: every numeric key but the bookkeeping ones
    (see ``BOOKKEEPING_KEYS``), in the order they first appear."""
    return [key for key in series if key.rsplit("/", 1)[-1].lower() not in BOOKKEEPING_KEYS]


def plot_scalars(
    source: str | os.PathLike | Mapping[str, ScalarSeries] | History,
    keys: Sequence[str] | None = None,
    title: str | None = None,
    single_run: bool = False,
) -> Figure:
    """A figure with one panel per metric: its values (y) against the training iteration (x).

    Args:
        source: A scalars.json file, a work dir holding one (see ``find_scalars_file``), a
            :class:`~.run_history.History`, or series already read with ``read_scalars``.
        keys: The keys to draw, in this order; default: :func:`default_keys`.
        title: The figure's title; default: the scalars file's path.
        single_run: Draw the run of the scalars file alone, not with the runs it resumed from
            (a path ``source`` only).

    Keys that name one metric in different phases (``loss`` and ``val/loss``) share a panel,
    with a legend (see ``plot_panels.panel_groups``). The x of a value is its line's ``iter``
    when the file has them (the axis is then labelled ``iteration``), else its ``step``; every
    panel spans the same x range. Panels are laid out in rows of up to three, each 5 x 3
    inches at 100 dpi.

    Example:
        >>> figure = plot_scalars('work_dirs/resnet', keys=['loss', 'val/loss', 'lr'])
        ... # doctest: +SKIP
        >>> [axes.get_title() for axes in figure.axes]  # doctest: +SKIP
        ['loss', 'lr']
    """
    resume_points: list[int] = []
    if isinstance(source, Mapping):
        series, where = source, "the scalars given"
    else:
        history = source if isinstance(source, History) else read_history(source, single_run)
        series, where = history.series, _history_title(history)
        resume_points = history.resume_points
    chosen = _choose_keys(series, keys, where)
    panels = panel_groups(chosen)
    columns = min(len(panels), MAX_COLUMNS)
    rows = math.ceil(len(panels) / columns)
    figure = Figure(
        figsize=(PANEL_SIZE[0] * columns, PANEL_SIZE[1] * rows + TITLE_HEIGHT),
        dpi=DPI,
        layout="constrained",
    )
    figure.suptitle(where if title is None else title, fontsize="medium")
    x_label = "iteration" if any(series[key].has_iterations for key in chosen) else "step"
    every_x: list[float] = []
    all_axes = []
    for index, (panel_title, panel_keys) in enumerate(panels):
        axes = figure.add_subplot(rows, columns, index + 1)
        for key in panel_keys:
            entry = series[key]
            x = entry.iteration_axis()
            every_x.extend(x)
            marker = "o" if len(x) <= MARKER_LIMIT else None
            axes.plot(x, entry.values, marker=marker, markersize=3, linewidth=1.2, label=key)
        for point in resume_points:  # where a run was resumed: one history, marked
            axes.axvline(point, color="0.6", linestyle=":", linewidth=1)
        if len(panel_keys) > 1:
            axes.legend(fontsize="small")
        axes.set_title(panel_title)
        axes.set_xlabel(x_label)
        axes.grid(True, color="0.9")
        all_axes.append(axes)
    _share_x_range(all_axes, every_x)
    return figure


def _share_x_range(all_axes: list, every_x: list[float]) -> None:
    """One x range for every panel, so that an iteration is at the same place in each."""
    finite = [x for x in every_x if math.isfinite(x)]
    if not finite or min(finite) == max(finite):
        return  # matplotlib's own margins around a single x
    low, high = min(finite), max(finite)
    margin = (high - low) * 0.02
    for axes in all_axes:
        axes.set_xlim(low - margin, high + margin)


@dataclass
class PlotResult:
    """What :func:`plot_file` read and wrote."""

    scalars: FoundScalars
    out: Path
    keys: list[str]
    panels: list[list[str]]
    """The keys of each panel, in the figure's order."""
    history: History | None = None
    """The runs drawn (the newest and those it resumed from)."""

    def read_summary(self) -> str:
        """What was read: the scalars file (and why), then each earlier run of its history."""
        lines = [f"read {self.scalars.path} ({self.scalars.reason})"]
        if self.history is not None and self.history.summary():
            lines.append(self.history.summary())
        return "\n".join(lines)

    def panel_summary(self) -> str:
        """``'2 panels (loss + val/loss, lr)'``: what the command prints."""
        shown = ", ".join(" + ".join(keys) for keys in self.panels)
        return f"{len(self.panels)} panels ({shown})"


def plot_file(
    path: str | os.PathLike,
    keys: Sequence[str] | None = None,
    out: str | os.PathLike | None = None,
    single_run: bool = False,
) -> PlotResult:
    """Draw the scalars of ``path`` (a scalars.json or a work dir) and save them as a PNG.

    A resumed run is drawn with the runs it resumed from (see :mod:`.run_history`), unless
    ``single_run``. ``out`` defaults to ``curves.png`` next to the scalars file. The PNG is
    written atomically.
    """
    history = read_history(path, single_run)
    found = history.found
    chosen = _choose_keys(history.series, keys, os.fspath(found.path))
    figure = plot_scalars(history, chosen)
    target = Path(out) if out is not None else found.path.parent / DEFAULT_OUT_NAME
    encoded = io.BytesIO()
    figure.savefig(encoded, format="png", dpi=DPI)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, encoded.getbuffer())
    panels = [keys for _, keys in panel_groups(chosen)]
    return PlotResult(found, target, chosen, panels, history)


def _history_title(history: History) -> str:
    title = os.fspath(history.found.path)
    earlier = len(history.runs) - 1
    if earlier:
        title += f"\nwith the {earlier} run{'s' if earlier > 1 else ''} it resumed from"
    return title


def _choose_keys(
    series: Mapping[str, ScalarSeries], keys: Sequence[str] | None, where: str
) -> list[str]:
    if keys is None:
        chosen = default_keys(series)
        if not chosen:
            raise ValueError(
                f"no numeric data to plot in {where}"
                + (f" (only bookkeeping keys: {', '.join(series)})" if series else "")
            )
        return chosen
    if isinstance(keys, str):  # a single key, not its characters
        keys = [keys]
    if not keys:
        raise ValueError("no keys given to plot")
    for key in keys:
        if key not in series:
            raise ValueError(_unknown_key_message(key, list(series), where))
    return list(keys)


def _unknown_key_message(key: str, available: list[str], where: str) -> str:
    if not available:
        return f"no numeric data in {where}, so no key {key!r} to plot"
    message = f"unknown key {key!r} in {where}; available keys: {', '.join(available)}"
    closest = difflib.get_close_matches(key, available, n=1, cutoff=0.5)
    return message + (f"; closest: {closest[0]!r}" if closest else "")
