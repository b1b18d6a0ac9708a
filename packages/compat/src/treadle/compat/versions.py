"""``mmengine.__version__`` and friends: the MMEngine version whose API treadle follows, so the
toolboxes' own checks (``mmengine_minimum_version <= mmengine.__version__ < maximum``) pass."""

from __future__ import annotations

from typing import Any

_VERSION = "0.10.7"


def parse_version_info(version_str: str) -> tuple:
    """``'0.10.7'`` -> ``(0, 10, 7)``; a release candidate keeps its tag (``'1.0.0rc1'`` ->
    ``(1, 0, 0, 'rc1')``), as MMEngine's function of the same name.

    Example:
        >>> parse_version_info('0.10.7')
        (0, 10, 7)
        >>> parse_version_info('1.0.0rc1')
        (1, 0, 0, 'rc1')
    """
    parts: list[Any] = []
    for piece in version_str.split("."):
        if piece.isdigit():
            parts.append(int(piece))
        elif "rc" in piece:
            number, _, tag = piece.partition("rc")
            parts.extend([int(number), f"rc{tag}"])
    return tuple(parts)


def mmengine_version_names() -> dict[str, Any]:
    """What ``mmengine.version`` (and ``mmengine``) hold about the version."""
    return {
        "__version__": _VERSION,
        "version_info": parse_version_info(_VERSION),
        "parse_version_info": parse_version_info,
    }
