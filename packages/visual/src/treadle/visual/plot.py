"""Loss curves from ``scalars.json``: one panel per key, drawn headless.

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

from .scalars_file import FoundScalars, ScalarSeries, find_scalars_file, read_scalars

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
    source: str | os.PathLike | Mapping[str, ScalarSeries],
    keys: Sequence[str] | None = None,
    title: str | None = None,
) -> Figure:
    """A figure with one panel per key: its values (y) against ``step`` (x).

    Args:
        source: A scalars.json file, a work dir holding one (see ``find_scalars_file``), or
            series already read with ``read_scalars``.
        keys: The keys to draw, in this order; default: :func:`default_keys`.
        title: The figure's title; default: the scalars file's path.

    Panels are laid out in rows of up to three, each 5 x 3 inches at 100 dpi.

    Example:
        >>> figure = plot_scalars('work_dirs/resnet', keys=['loss', 'lr'])  # doctest: +SKIP
        >>> [axes.get_title() for axes in figure.axes]  # doctest: +SKIP
        ['loss', 'lr']
    """
    if isinstance(source, Mapping):
        series, where = source, "the scalars given"
    else:
        found = find_scalars_file(source)
        series, where = read_scalars(found.path), os.fspath(found.path)
    chosen = _choose_keys(series, keys, where)
    columns = min(len(chosen), MAX_COLUMNS)
    rows = math.ceil(len(chosen) / columns)
    figure = Figure(
        figsize=(PANEL_SIZE[0] * columns, PANEL_SIZE[1] * rows + TITLE_HEIGHT),
        dpi=DPI,
        layout="constrained",
    )
    figure.suptitle(where if title is None else title, fontsize="medium")
    for index, key in enumerate(chosen):
        axes = figure.add_subplot(rows, columns, index + 1)
        entry = series[key]
        marker = "o" if len(entry.steps) <= MARKER_LIMIT else None
        axes.plot(entry.steps, entry.values, marker=marker, markersize=3, linewidth=1.2)
        axes.set_title(key)
        axes.set_xlabel("step")
        axes.grid(True, color="0.9")
    return figure


@dataclass
class PlotResult:
    """What :func:`plot_file` read and wrote."""

    scalars: FoundScalars
    out: Path
    keys: list[str]


def plot_file(
    path: str | os.PathLike,
    keys: Sequence[str] | None = None,
    out: str | os.PathLike | None = None,
) -> PlotResult:
    """Draw the scalars of ``path`` (a scalars.json or a work dir) and save them as a PNG.

    ``out`` defaults to ``curves.png`` next to the scalars file. The PNG is written atomically.
    """
    found = find_scalars_file(path)
    series = read_scalars(found.path)
    chosen = _choose_keys(series, keys, os.fspath(found.path))
    figure = plot_scalars(series, chosen, title=os.fspath(found.path))
    target = Path(out) if out is not None else found.path.parent / DEFAULT_OUT_NAME
    encoded = io.BytesIO()
    figure.savefig(encoded, format="png", dpi=DPI)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, encoded.getbuffer())
    return PlotResult(found, target, chosen)


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
