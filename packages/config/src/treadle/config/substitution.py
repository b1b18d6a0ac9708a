"""Text substitutions done before a config is parsed, as MMEngine does them.

- predefined variables: ``{{ fileDirname }}``, ``{{ fileBasename }}``,
  ``{{ fileBasenameNoExtension }}``, ``{{ fileExtname }}``;
- environment variables: ``{{ $NAME:default }}`` (quotes inside the braces allowed);
- references to base values: ``{{ _base_.a.b }}``. Each becomes a token (a name) that is
  resolved once the bases are loaded: a whole value takes the base value with its type, a token
  inside a string is replaced by the value's ``str``.

Substitutions never add or remove lines, so line numbers in errors stay those of the file.
"""

from __future__ import annotations

import os
import re

from .errors import ConfigIndexError, ConfigKeyError, closest

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PREDEFINED = re.compile(
    r"\{\{\s*(fileDirname|fileBasenameNoExtension|fileBasename|fileExtname)\s*\}\}"
)
_ENV = re.compile(r"\{\{['\"]?\s*\$(\w+)\s*:\s*(\S*?)\s*['\"]?\}\}")
_BASE_REF = re.compile(r"\{\{\s*_base_\.([\w.]+)\s*\}\}")
_TOKEN = "__treadle_base_ref_{}__"
_TOKEN_RE = re.compile(r"__treadle_base_ref_(\d+)__")


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def predefined_variables(filename: str) -> dict[str, str]:
    dirname, basename = os.path.split(filename)
    stem, ext = os.path.splitext(basename)
    values = {
        "fileDirname": dirname,
        "fileBasename": basename,
        "fileBasenameNoExtension": stem,
        "fileExtname": ext,
    }
    return {k: v.replace("\\", "/") for k, v in values.items()}


def substitute_predefined(text: str, filename: str) -> str:
    if "{{" not in text:
        return text
    values = predefined_variables(filename)
    return _PREDEFINED.sub(lambda m: values[m.group(1)], text)


def substitute_env(text: str, filename: str, used: dict[str, str]) -> str:
    """Replace ``{{$NAME:default}}``; record the variables read from the environment in ``used``."""
    if "{{" not in text:
        return text

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            used[name] = os.environ[name]
            return os.environ[name]
        if not default:
            raise ConfigKeyError(
                f"environment variable ${name} is not set and {match.group(0)} gives no default "
                f"(write {{{{${name}:default}}}})",
                filename,
                line_of(text, match.start()),
            )
        return default

    return _ENV.sub(replace, text)


class BaseRefs:
    """The ``{{_base_.x}}`` references of one file, replaced by tokens in its text."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        #: (dotted key after ``_base_.``, line) of each token, by token number.
        self.refs: list[tuple[str, int]] = []
        self.values: list[Any] = []

    def __bool__(self) -> bool:
        return bool(self.refs)

    def replace(self, text: str, quote_outside_strings: bool = False) -> str:
        """Tokens for references. JSON needs quotes around a token that is a whole value."""
        if "_base_" not in text or "{{" not in text:
            return text

        def replace(match: re.Match[str]) -> str:
            token = _TOKEN.format(len(self.refs))
            self.refs.append((match.group(1), line_of(text, match.start())))
            if quote_outside_strings and not _inside_json_string(text, match.start()):
                return f'"{token}"'
            return token

        return _BASE_REF.sub(replace, text)

    def resolve(self, base: dict[str, Any]) -> dict[str, Any]:
        """Look every reference up in ``base``; returns ``{token: value}``."""
        self.values = [self._lookup(base, key, line) for key, line in self.refs]
        return {_TOKEN.format(i): v for i, v in enumerate(self.values)}

    def _lookup(self, base: dict[str, Any], key: str, line: int) -> Any:
        value: Any = base
        walked = "_base_"
        for part in key.split("."):
            if isinstance(value, dict) and part in value:
                value = dict.__getitem__(value, part)
            elif isinstance(value, (list, tuple)) and part.isdigit():
                if int(part) >= len(value):
                    raise ConfigIndexError(
                        f"{{{{_base_.{key}}}}}: {walked} has {len(value)} items, no index {part}",
                        self.filename,
                        line,
                    )
                value = value[int(part)]
            else:
                known = value.keys() if isinstance(value, dict) else ()
                what = "no key" if isinstance(value, dict) else f"a {type(value).__name__}, no key"
                raise ConfigKeyError(
                    f"{{{{_base_.{key}}}}}: {walked} has {what} '{part}'{closest(part, known)}",
                    self.filename,
                    line,
                )
            walked += f".{part}"
        if type(value) is dict:  # the code may read it as a ConfigDict, as it reads _base_
            from .config_dict import wrap

            return wrap(value)
        return value

    def substitute(self, value: Any) -> Any:
        """Put the resolved values where tokens are in ``value`` (dicts, lists, tuples, strs)."""
        if isinstance(value, str):
            if "__treadle_base_ref_" not in value:
                return value
            whole = _TOKEN_RE.fullmatch(value)
            if whole:
                return self.values[int(whole.group(1))]
            return _TOKEN_RE.sub(lambda m: str(self.values[int(m.group(1))]), value)
        if isinstance(value, dict):
            for key, item in dict.items(value):
                new = self.substitute(item)
                if new is not item:
                    dict.__setitem__(value, key, new)
            return value
        if isinstance(value, list):
            value[:] = [self.substitute(v) for v in value]
            return value
        if type(value) is tuple:
            return tuple(self.substitute(v) for v in value)
        return value


def _inside_json_string(text: str, offset: int) -> bool:
    """Whether ``offset`` is inside a JSON string: an odd number of unescaped quotes before it
    on its line (JSON strings cannot span lines)."""
    start = text.rfind("\n", 0, offset) + 1
    quotes = 0
    escaped = False
    for char in text[start:offset]:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quotes += 1
    return quotes % 2 == 1
