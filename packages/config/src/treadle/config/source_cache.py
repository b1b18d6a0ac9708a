"""What parsing and compiling a config file gives, kept for the process and reused while the
file's text is the same.

A toolbox's configs share their ``_base_`` files: loading a few hundred configs would otherwise
parse and compile each base once per config that reads it. Entries are found by file name and
used only when the text just read equals the text they were made from, so an edit is always
seen, even one that keeps the file's size and modification time; comparing the text costs far
less than parsing it. Only products that nobody changes are kept (code objects, what a file
imports, which bases it names, the values of a .json or .yaml text as ``marshal`` bytes that
each load turns into its own copy). The values a config defines are made again on every load, so
environment variables are read each time; the one exception, a pure-Python config whose code can
compute from nothing but its own text and its bases (pure_python.py), hands each load its own
copy, so a loaded config can still be changed freely.

One entry per file and kind: an edited file replaces its entry, so the cache holds no more than
the files the process has loaded.

Files are read as bytes (``read_text``): when they are the bytes of the previous read, its text
is given back, the same object, so the comparison above costs nothing; otherwise they are
decoded as ``open(filename, encoding='utf-8').read()`` would.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")

# (kind, filename) -> (text, product)
_entries: dict[tuple[str, str], tuple[str, Any]] = {}
# filename -> (bytes, text) of its latest read
_texts: dict[str, tuple[bytes, str]] = {}
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0)


def read_text(filename: str) -> str:
    """The text of ``filename``, UTF-8 with universal newlines (what ``open(filename,
    encoding='utf-8').read()`` gives), read afresh on every call.

    Example:
        >>> read_text(__file__) == open(__file__, encoding='utf-8').read()
        True
    """
    fd = os.open(filename, _READ_FLAGS)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(fd)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    last = _texts.get(filename)
    if last is not None and last[0] == data:
        return last[1]
    text = data.decode("utf-8")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    _texts[filename] = (data, text)
    return text


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
    """Forget every entry (the next load reads, parses and compiles again)."""
    from . import pure_program, python_head, python_pieces

    _entries.clear()
    _texts.clear()
    python_pieces.clear()
    python_head.clear()
    pure_program.clear()
