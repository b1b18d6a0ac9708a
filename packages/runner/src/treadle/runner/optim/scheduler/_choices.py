"""Arguments that take one of a few names: the error names the closest valid one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def did_you_mean(value: Any, candidates: Sequence[str]) -> str:
    """``"; did you mean 'x'?"`` for the candidate closest to ``value``, ``""`` when none is."""
    if not isinstance(value, str):
        return ""
    from treadle.registry.suggestions import close_matches

    close = close_matches(value, list(candidates))
    return f"; did you mean {close[0]!r}?" if close else ""


def check_choice(
    owner: str, key: str, value: Any, valid: Sequence[str], mmengine_phrase: str = ""
) -> None:
    """ValueError naming ``owner``, ``key``, the valid values and the closest one, unless
    ``value`` is valid; ``mmengine_phrase`` (MMEngine's wording, which downstream tests match)
    ends the message."""
    if value in valid:
        return
    phrase = f" ({mmengine_phrase})" if mmengine_phrase else ""
    raise ValueError(
        f"{owner}: {key} must be one of {', '.join(map(repr, valid))}, got {value!r}"
        f"{did_you_mean(value, valid)}{phrase}"
    )
