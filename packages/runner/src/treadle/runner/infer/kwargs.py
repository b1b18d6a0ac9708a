"""Send each keyword of an inferencer's ``__call__`` to the stage that declares it."""

from __future__ import annotations

import difflib
from typing import Any

from .meta import STAGE_ATTRIBUTES


def dispatch_kwargs(cls: type, kwargs: dict[str, Any]) -> tuple[dict, dict, dict, dict]:
    """``kwargs`` split into the preprocess, forward, visualize and postprocess keywords of
    the inferencer class ``cls``; an unknown keyword is an error naming the known ones."""
    stages = [getattr(cls, attribute) for attribute in STAGE_ATTRIBUTES]
    split: tuple[dict, dict, dict, dict] = ({}, {}, {}, {})
    unknown = []
    for key, value in kwargs.items():
        for names, chosen in zip(stages, split, strict=True):
            if key in names:
                chosen[key] = value
                break
        else:
            unknown.append(key)
    if unknown:
        known = sorted(set().union(*stages))
        hints = []
        for key in unknown:
            close = difflib.get_close_matches(key, known, n=1)
            if close:
                hints.append(f"{key!r} (did you mean {close[0]!r}?)")
            else:
                hints.append(repr(key))
        raise ValueError(
            f"unknown argument {', '.join(hints)} for {cls.__name__}: its preprocess, forward, "
            f"visualize and postprocess take {', '.join(map(repr, known)) or 'no keywords'}"
        )
    return split
