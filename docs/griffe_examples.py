"""Griffe extension: the ``Example:`` sections of treadle's docstrings are examples.

The docstrings follow MMEngine's Google style with a singular ``Example:`` heading, which
griffe's Google parser takes for a generic admonition, rendering ``>>>`` lines as Markdown
quotes. Renamed to ``Examples:`` before parsing, their doctest lines become code blocks.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

HEADING = re.compile(r"^(\s*)Example:[ \t]*$", re.M)


class SingularExamples(griffe.Extension):
    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = HEADING.sub(r"\1Examples:", obj.docstring.value)
