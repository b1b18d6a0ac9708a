"""``DictAction``: ``--cfg-options model.depth=50 data.sizes=[1,2] flag=True`` for argparse."""

from __future__ import annotations

import argparse

from .errors import ConfigBracketError, ConfigValueError

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


def _split_top_level(text: str) -> list[str]:
    """Split at the commas outside brackets: where the text since the last split holds as many
    ``(`` as ``)`` and as many ``[`` as ``]`` (MMEngine's rule). An empty last part (a trailing
    comma, or no text at all) is dropped; empty parts before it are kept, as ``''``."""
    parts, start, parens, brackets = [], 0, 0, 0
    for i, char in enumerate(text):
        if char == "(":
            parens += 1
        elif char == ")":
            parens -= 1
        elif char == "[":
            brackets += 1
        elif char == "]":
            brackets -= 1
        elif char == "," and not parens and not brackets:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    if parts[-1] == "":
        parts.pop()
    return parts


def _balanced(text: str) -> bool:
    return text.count("(") == text.count(")") and text.count("[") == text.count("]")


def parse_value(text: str, whole: str | None = None) -> Any:
    """A ``--cfg-options`` value: scalars, ``a,b``, ``[a,b]``, ``(a,b)``, nested.

    Like MMEngine, quotes around the value are stripped and spaces removed; a value without a
    comma that is not wrapped in brackets is a scalar (``a(b)`` is the string ``'a(b)'``). A
    list or tuple whose brackets do not pair up raises ``ConfigBracketError`` (a ValueError
    and, as in MMEngine, an AssertionError).

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
        if not _balanced(text):
            import warnings

            warnings.warn(
                f"--cfg-options value {whole!r}: {text!r} has unpaired brackets; it is taken as "
                "the string it is (as MMEngine does)",
                UserWarning,
                stacklevel=2,
            )
        return parse_scalar(text)
    if not _balanced(inner):
        raise ConfigBracketError(
            f"Imbalanced brackets exist in {inner}: in {whole!r}, each ( needs a ) and each [ a ]"
        )
    values = [parse_value(part, whole) for part in _split_top_level(inner)]
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
        option = option_string or self.dest
        # Errors are raised as they are, not as argparse.ArgumentError (which argparse turns into
        # a usage message and SystemExit): MMEngine's DictAction raises ValueError (no '=') and
        # AssertionError (unpaired brackets), and scripts written for it catch those.
        for item in values or ():
            key, sep, text = str(item).partition("=")
            if not sep:
                raise ConfigValueError(f"{option}: expected KEY=VALUE, got {item!r}")
            try:
                options[key] = parse_value(text)
            except ConfigValueError as err:
                raise type(err)(f"{option}: {key}: {err.message}") from None
        setattr(namespace, self.dest, options)
