"""``DictAction``: ``--cfg-options model.depth=50 data.sizes=[1,2] flag=True`` for argparse."""

from __future__ import annotations

import argparse

from .errors import ConfigValueError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


def parse_scalar(text: str) -> Any:
    """``'3'`` → 3, ``'0.1'`` → 0.1, ``'true'``/``'False'`` → bool, ``'None'`` → None, else str."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if text == "None":
        return None
    return text


def _split_top_level(text: str, whole: str) -> list[str]:
    """Split at commas that are not inside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
            if depth < 0:
                raise ConfigValueError(f"unbalanced brackets in {whole!r}")
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if depth:
        raise ConfigValueError(f"unbalanced brackets in {whole!r}")
    parts.append(text[start:])
    return parts


def parse_value(text: str, whole: str | None = None) -> Any:
    """A ``--cfg-options`` value: scalars, ``a,b``, ``[a,b]``, ``(a,b)``, nested.

    Like MMEngine, quotes around the value are stripped and spaces removed.

    Example:
        >>> parse_value('[(1,2),[a,b],c]')
        [(1, 2), ['a', 'b'], 'c']
    """
    whole = whole if whole is not None else text
    text = text.strip("'\"").replace(" ", "")
    is_tuple = text.startswith("(") and text.endswith(")")
    if is_tuple or (text.startswith("[") and text.endswith("]")):
        inner = text[1:-1]
    elif "," in text:
        inner = text
    else:
        if any(c in text for c in "()[]"):
            raise ConfigValueError(f"unbalanced brackets in {whole!r}")
        return parse_scalar(text)
    values = [parse_value(part, whole) for part in _split_top_level(inner, whole) if part != ""]
    return tuple(values) if is_tuple else values


class DictAction(argparse.Action):
    """Collects ``KEY=VALUE`` arguments into a dict (``nargs='+'``); see ``parse_value``.

    Example:
        >>> parser = argparse.ArgumentParser()
        >>> _ = parser.add_argument('--cfg-options', nargs='+', action=DictAction)
        >>> parser.parse_args(['--cfg-options', 'a.b=1', 'c=[x,(2,3)]', 'd=None']).cfg_options
        {'a.b': 1, 'c': ['x', (2, 3)], 'd': None}
    """

    @staticmethod
    def _parse_int_float_bool(val: str) -> Any:
        return parse_scalar(val)

    @staticmethod
    def _parse_iterable(val: str) -> Any:
        return parse_value(val)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        options = dict(getattr(namespace, self.dest, None) or {})
        if isinstance(values, str):
            values = [values]
        for item in values or ():
            key, sep, text = str(item).partition("=")
            if not sep or not key:
                raise argparse.ArgumentError(self, f"expected KEY=VALUE, got {item!r}")
            try:
                options[key] = parse_value(text)
            except ConfigValueError as err:
                raise argparse.ArgumentError(self, f"{key}: {err.message}") from None
        setattr(namespace, self.dest, options)
