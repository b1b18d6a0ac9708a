"""InferencerMeta: each keyword of an inferencer's ``__call__`` goes to exactly one stage."""

from __future__ import annotations

from abc import ABCMeta
from typing import Any

STAGE_ATTRIBUTES = ("preprocess_kwargs", "forward_kwargs", "visualize_kwargs", "postprocess_kwargs")


class InferencerMeta(ABCMeta):
    """Checks, when an inferencer class is defined, that its ``*_kwargs`` class attributes are
    sets of names and that no name is in two of them (``__call__`` dispatches by name).

    Example:
        >>> class Bad(BaseInferencer):
        ...     forward_kwargs = {'show'}
        ...     visualize_kwargs = {'show'}
        Traceback (most recent call last):
        TypeError: Bad: the keyword 'show' is in both forward_kwargs and visualize_kwargs ...
    """

    def __init__(cls, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        owner: dict[str, str] = {}
        for attribute in STAGE_ATTRIBUTES:
            names = getattr(cls, attribute, set())
            if not isinstance(names, (set, frozenset)):
                raise TypeError(
                    f"{cls.__name__}.{attribute} must be a set of keyword names, got "
                    f"{type(names).__name__}: {names!r}"
                )
            for name in sorted(names):
                if name in owner:
                    raise TypeError(
                        f"{cls.__name__}: the keyword {name!r} is in both {owner[name]} and "
                        f"{attribute}; __call__ could not tell which stage it is for"
                    )
                owner[name] = attribute
