"""Rendering of the analysis tables: rich's ASCII2 box, as plain text, never wrapped."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table


def render_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], title: str | None = None
) -> str:
    """Render ``rows`` under ``headers`` in MMEngine's table format (rich, ``box.ASCII2``).

    MMEngine prints through a Console sized to the terminal, so a wide model's table wraps its
    cells (or gets ANSI colours in a terminal); here the width is the table's own and the text
    is plain, so the string is the same wherever it is made.

    Example:
        >>> print(render_table(['name', 'n'], [['model', '3']]), end='')
        +-------+---+
        | name  | n |
        +-------+---+
        | model | 3 |
        +-------+---+
    """
    table = Table(title=title, box=box.ASCII2)
    for header in headers:
        table.add_column(header)
    for row in rows:
        table.add_row(*row)
    console = Console(width=100_000, color_system=None, force_terminal=False, highlight=False)
    with console.capture() as capture:
        console.print(table, end="")
    return capture.get()
