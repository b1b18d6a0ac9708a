"""Local paths: make folders, list files, link, check and open. Remote paths are
treadle.fileio's job; these helpers are for the local disk only."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

# 's3://bucket', 'http://host': a scheme names a backend, whose paths are always absolute.
_URI = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


def is_filepath(x: Any) -> bool:
    """Whether ``x`` can be a path: a str or a ``pathlib.Path``."""
    return isinstance(x, (str, Path))


def is_abs(path: str) -> bool:
    """Whether ``path`` is absolute: an absolute local path or a URI such as 's3://b/k'.

    Example:
        >>> is_abs('/data'), is_abs('data'), is_abs('s3://bucket/data')
        (True, False, True)
    """
    return os.path.isabs(path) or bool(_URI.match(path))


def fopen(filepath: str | Path, *args: Any, **kwargs: Any) -> IO:
    """``open(filepath, *args, **kwargs)`` for a str or a Path; anything else is refused."""
    if not is_filepath(filepath):
        raise ValueError(
            f"`filepath` should be a string or a Path, got {type(filepath).__name__}: {filepath!r}"
        )
    return open(filepath, *args, **kwargs)  # the caller closes what it opened


def check_file_exist(filename: str | Path, msg_tmpl: str = 'file "{}" does not exist') -> None:
    """Raise ``FileNotFoundError`` with ``msg_tmpl.format(filename)`` unless ``filename`` is an
    existing file (a folder is not a file)."""
    if not os.path.isfile(filename):
        raise FileNotFoundError(msg_tmpl.format(filename))


def mkdir_or_exist(dir_name: str | Path, mode: int = 0o777) -> None:
    """Create ``dir_name`` and its parents unless it exists; '' means the current folder."""
    if dir_name == "":
        return
    os.makedirs(os.path.expanduser(dir_name), mode=mode, exist_ok=True)


def symlink(src: str | Path, dst: str | Path, overwrite: bool = True, **kwargs: Any) -> None:
    """Make ``dst`` a symbolic link to ``src``, replacing a link or file already at ``dst``
    when ``overwrite`` (a folder at ``dst`` is never removed). ``kwargs`` go to ``os.symlink``.
    """
    is_real_folder = os.path.isdir(dst) and not os.path.islink(dst)
    if overwrite and os.path.lexists(dst) and not is_real_folder:
        os.remove(dst)
    os.symlink(src, dst, **kwargs)


def _suffix_matcher(suffix: str | tuple[str, ...] | None, case_sensitive: bool):
    if suffix is None:
        return lambda name: True
    names_a_suffix = isinstance(suffix, str) or (
        isinstance(suffix, tuple) and all(isinstance(s, str) for s in suffix)
    )
    if not names_a_suffix:
        raise TypeError(f'"suffix" must be a string or tuple of strings, got {suffix!r}')
    if case_sensitive:
        return lambda name: name.endswith(suffix)
    lowered = suffix.lower() if isinstance(suffix, str) else tuple(s.lower() for s in suffix)
    return lambda name: name.lower().endswith(lowered)


def scandir(
    dir_path: str | Path,
    suffix: str | tuple[str, ...] | None = None,
    recursive: bool = False,
    case_sensitive: bool = True,
) -> Iterator[str]:
    """Yield the files in ``dir_path`` (paths relative to it) whose names end with ``suffix``,
    going into sub-folders when ``recursive``. Hidden files are skipped; hidden folders are not.

    Example:
        >>> sorted(scandir('configs', '.py', recursive=True))  # doctest: +SKIP
        ['_base_/default_runtime.py', 'resnet/resnet50.py']
    """
    if not is_filepath(dir_path):
        raise TypeError(
            f'"dir_path" must be a string or Path object, got {type(dir_path).__name__}'
        )
    matches = _suffix_matcher(suffix, case_sensitive)
    root = str(dir_path)

    def walk(folder: str) -> Iterator[str]:
        for entry in os.scandir(folder):
            if entry.is_file() and not entry.name.startswith("."):
                if matches(entry.name):
                    yield os.path.relpath(entry.path, root)
            elif recursive and entry.is_dir():
                yield from walk(entry.path)

    return walk(root)
