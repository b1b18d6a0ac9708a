"""ProgressBar: count finished tasks and show the progress."""

from __future__ import annotations

import sys
from typing import TextIO

from .progress_display import PlainDisplay, RichDisplay, open_display
from .progress_mmengine import MMEngineDisplay


class ProgressBar:
    """A progress bar for ``task_num`` tasks (0: unknown), advanced by ``update()``.

    On a terminal it is a live rich bar; written to a file or a pipe it is a few plain lines
    (no escapes). ``force_terminal`` overrides the check (True: always the live bar). With
    ``mmengine_format`` (switched on by treadle.compat) it writes MMEngine's text wherever it
    goes: one line redrawn after a carriage return at each update, ended by ``close()``.

    Example:
        >>> bar = ProgressBar(3)
        >>> for _ in range(3):
        ...     bar.update()
        >>> bar.completed
        3
    """

    #: MMEngine's progress text for bars started from now on (see above).
    mmengine_format = False

    def __init__(
        self,
        task_num: int = 0,
        bar_width: int = 50,
        start: bool = True,
        file: TextIO | None = None,
        *,
        force_terminal: bool | None = None,
    ) -> None:
        self.task_num = task_num
        self.bar_width = bar_width
        self.file = file
        self.force_terminal = force_terminal
        self.completed = 0
        self._display: PlainDisplay | RichDisplay | MMEngineDisplay | None = None
        if start:
            self.start()

    def start(self) -> None:
        """Show the bar at 0 and start the clock."""
        self.completed = 0
        if self.mmengine_format:
            file = sys.stdout if self.file is None else self.file
            self._display = MMEngineDisplay(file, self.task_num, self.bar_width)
            return
        self._display = open_display(
            self.task_num,
            file=self.file,
            bar_width=self.bar_width,
            force_terminal=self.force_terminal,
        )

    def update(self, num_tasks: int = 1) -> None:
        """Count ``num_tasks`` more finished tasks."""
        if self._display is None:
            self.start()
        self.completed += num_tasks
        if self.task_num and self.completed >= self.task_num:
            self.finish()
        else:
            self._display.update(self.completed)

    def finish(self) -> None:
        """Draw the final state; called by ``update`` once ``task_num`` tasks are done, and by
        the ``track_*`` functions for bars of unknown length."""
        if self._display is not None:
            self._display.finish(self.completed)

    def close(self) -> None:
        """Draw the final state and end the bar's output (MMEngine's text ends its line here);
        the ``track_*`` functions call it when their tasks are done."""
        if self._display is not None:
            self._display.close(self.completed)
