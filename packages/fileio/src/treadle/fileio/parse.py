"""list_from_file and dict_from_file: line-based text files on any backend."""

from __future__ import annotations

from .io import get_text
from .serialization import _merge_backend_args

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Callable
    from typing import Any


def _lines(text: str) -> list[str]:
    """The lines of ``text`` without their endings. Only a line feed ends a line (a carriage
    return before it goes too): str.splitlines would also split at form feeds and Unicode
    separators, which may be part of a name."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def list_from_file(
    filename: str | os.PathLike[str],
    prefix: str = "",
    offset: int = 0,
    max_num: int = 0,
    encoding: str = "utf-8",
    file_client_args: dict[str, Any] | None = None,
    backend_args: dict[str, Any] | None = None,
) -> list[str]:
    """The lines of a text file, without their line endings, each after ``prefix``: from
    line ``offset`` on (a negative offset counts as 0), at most ``max_num`` of them (0 or
    less: all).

    Example:
        >>> list_from_file('s3://bucket/classes.txt', prefix='cls_', max_num=2)
        ['cls_cat', 'cls_dog']
    """
    backend_args = _merge_backend_args(file_client_args, backend_args)
    lines = _lines(get_text(filename, encoding, backend_args=backend_args))
    lines = lines[max(offset, 0) :]
    if max_num > 0:
        lines = lines[:max_num]
    return [prefix + line for line in lines]


def dict_from_file(
    filename: str | os.PathLike[str],
    key_type: Callable[..., Any] = str,
    encoding: str = "utf-8",
    file_client_args: dict[str, Any] | None = None,
    backend_args: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A dict from a text file of whitespace-separated columns: the first column is the key
    (converted by ``key_type``), the rest the value (a str for one column, else a list).

    Example:
        >>> dict_from_file('labels.txt', key_type=int)
        {1: 'cat', 2: ['dog', 'puppy']}
    """
    backend_args = _merge_backend_args(file_client_args, backend_args)
    mapping = {}
    for number, line in enumerate(
        _lines(get_text(filename, encoding, backend_args=backend_args)), 1
    ):
        items = line.split()
        if not items:
            continue
        if len(items) < 2:
            raise ValueError(
                f"line {number} of {str(filename)!r} has one column, {line!r}: dict_from_file "
                "needs a key and at least one value per line"
            )
        mapping[key_type(items[0])] = items[1:] if len(items) > 2 else items[1]
    return mapping
