"""What parsing and compiling a config file gives, kept for the process and reused while the
file's text is the same.

A toolbox's configs share their ``_base_`` files: loading a few hundred configs would otherwise
parse and compile each base once per config that reads it. Entries are found by file name and
used only when the text just read equals the text they were made from, so an edit is always
seen, even one that keeps the file's size and modification time; comparing the text costs far
less than parsing it. Only products that nobody changes are kept (code objects, what a file
imports, which bases it names). The values a config defines are made again on every load, so
environment variables are read each time; the one exception, a pure-Python config whose code can
compute from nothing but its own text and its bases (pure_python.py), hands each load its own
copy, so a loaded config can still be changed freely.

One entry per file and kind: an edited file replaces its entry, so the cache holds no more than
the files the process has loaded.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

# (kind, filename) -> (text, product)
_entries: dict[tuple[str, str], tuple[str, Any]] = {}


def cached(kind: str, filename: str, text: str, make: Callable[[], T]) -> T:
    """``make()``'s product for ``filename`` holding ``text``: made on the first call, then
    reused while the text is the same. An exception from ``make`` is raised and nothing kept.

    Example:
        >>> cached('demo', 'a.py', 'x = 1', lambda: compile('x = 1', 'a.py', 'exec')).co_filename
        'a.py'
    """
    key = (kind, filename)
    entry = _entries.get(key)
    if entry is not None and entry[0] == text:
        product: T = entry[1]
        return product
    product = make()
    _entries[key] = (text, product)
    return product


def clear() -> None:
    """Forget every entry (the next load parses and compiles again)."""
    _entries.clear()
