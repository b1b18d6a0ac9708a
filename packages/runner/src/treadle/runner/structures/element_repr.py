"""The text a data element prints: MMEngine's META INFORMATION / DATA FIELDS layout.

Each field is one line ``name: repr(value)`` indented by four spaces per level; a dict value
opens a deeper level with one line per key, and the continuation lines of a multi-line repr
(a tensor, a nested element) are shifted under their field so the blocks stay readable.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_STEP = 4


def _indent_continuation(text: str, spaces: int) -> str:
    # Shift every line after the first; blank lines too, as MMEngine prints them.
    return text.replace("\n", "\n" + " " * spaces)


def _field_lines(items: Iterable[tuple[Any, Any]], indent: int) -> str:
    lines = []
    for name, value in items:
        head = f"\n{' ' * indent}{name}: "
        if isinstance(value, dict):
            lines.append(head + _field_lines(value.items(), indent + _STEP))
        else:
            lines.append(head + _indent_continuation(repr(value), indent + _STEP))
    return "".join(lines)


def element_repr(
    element: object,
    metainfo_items: Iterable[tuple[str, Any]],
    data_items: Iterable[tuple[str, Any]],
) -> str:
    """Format ``element`` with its metainfo and data blocks, ending with its address."""
    return (
        f"<{type(element).__name__}(\n"
        f"\n{' ' * _STEP}META INFORMATION{_field_lines(metainfo_items, _STEP)}\n"
        f"\n{' ' * _STEP}DATA FIELDS{_field_lines(data_items, _STEP)}"
        f"\n) at {hex(id(element))}>"
    )
