"""Exceptions of treadle.config: each names the config file and, where there is one, the line.

MMEngine raises builtin exceptions (FileNotFoundError, OSError, SyntaxError, KeyError,
AttributeError, TypeError, ...). Every class here subclasses both ``ConfigError`` and the builtin
MMEngine raised in the same situation, so ``except KeyError:`` written for MMEngine still works
and ``except ConfigError:`` catches every config problem at once.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any


class ConfigError(Exception):
    """A problem in a config, located at ``filename`` and ``lineno`` when they are known.

    Example:
        >>> err = ConfigKeyError("no key 'lr'", filename='cfg.py', lineno=3)
        >>> str(err)
        "cfg.py:3: no key 'lr'"
        >>> isinstance(err, KeyError)
        True
    """

    def __init__(
        self, message: str, filename: str | None = None, lineno: int | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.filename = filename
        self.lineno = lineno

    @property
    def location(self) -> str:
        """``file:line``, ``file`` or an empty string."""
        if self.filename is None:
            return ""
        return f"{self.filename}:{self.lineno}" if self.lineno else str(self.filename)

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.filename, self.lineno))


class ConfigParsingError(ConfigError, RuntimeError):
    """The config cannot be parsed (MMEngine's ``ConfigParsingError`` is a RuntimeError)."""


class ConfigFileNotFoundError(ConfigError, FileNotFoundError):
    """A config file, a ``_base_`` file or a ``pkg::`` config does not exist."""


class ConfigFormatError(ConfigError, OSError):
    """The file extension is not one of .py, .json, .yaml, .yml."""


class ConfigSyntaxError(ConfigError, SyntaxError):
    """Invalid Python, YAML or JSON. Python's traceback shows the offending line."""

    def __init__(
        self,
        message: str,
        filename: str | None = None,
        lineno: int | None = None,
        text: str | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(message, filename, lineno)
        # SyntaxError's own fields: the interpreter prints the line and a caret from them.
        self.msg = message
        self.text = text
        self.offset = offset

    def __str__(self) -> str:
        return ConfigError.__str__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.filename, self.lineno, self.text, self.offset))


class ConfigKeyError(ConfigError, KeyError):
    """A key that should exist does not (a ``{{_base_.x}}``, an env variable), or is reserved,
    or bases define the same key twice."""

    def __str__(self) -> str:
        # KeyError would quote the whole message; a config error reads better plain.
        return ConfigError.__str__(self)


class ConfigAttributeError(ConfigError, AttributeError):
    """``_base_.x`` or ``cfg.x`` names a key that does not exist."""


class ConfigTypeError(ConfigError, TypeError):
    """A value has the wrong type: a dict merged into a non-dict, a bad ``_base_`` value."""


class ConfigValueError(ConfigError, ValueError):
    """A value does not parse (``--cfg-options``) or ``_delete_`` has nothing to delete."""


class ConfigNameError(ConfigError, NameError):
    """A Python config uses a name it never defined."""


class ConfigBracketError(ConfigValueError, AssertionError):
    """A ``--cfg-options`` value whose brackets do not pair up: a ValueError, and the
    AssertionError MMEngine's DictAction raises there, so ``except AssertionError:`` written for
    MMEngine still catches it."""


class ConfigRecursionError(ConfigError, RecursionError):
    """The values hold themselves (a list or dict inside itself): MMEngine's conversion of
    them recurses without end and raises RecursionError."""


class ConfigImportError(ConfigError, ImportError):
    """``custom_imports`` or an import in a Python config failed."""


class ConfigIndexError(ConfigError, IndexError):
    """A list index (``a.3.b`` in ``merge_from_dict``, ``{{_base_.a.3}}``) is out of range."""


class ConfigListIndexError(ConfigIndexError, KeyError):
    """``merge_from_dict`` indexes past the end of a list: an IndexError, and the KeyError that
    MMEngine raises there, so ``except KeyError:`` written for MMEngine still catches it."""

    def __str__(self) -> str:
        return ConfigError.__str__(self)


class ConfigCycleError(ConfigParsingError):
    """``_base_`` files include each other."""


class StrictModeError(ConfigKeyError):
    """``strict=True``: a child config sets keys that none of its bases define."""

    def __init__(self, message: str, unknown: list[tuple[str, str, int | None]]) -> None:
        super().__init__(message)
        #: ``(dotted key, filename, line)`` of every key no base defines.
        self.unknown = unknown

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.unknown))


def closest(name: str, candidates: Iterable[Any]) -> str:
    """`` (did you mean 'x'?)`` naming the candidates closest to ``name``, or ``''``."""
    import difflib  # only on the error path: difflib costs import time

    names = [str(c) for c in candidates]
    close = difflib.get_close_matches(str(name), names, n=3, cutoff=0.6)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"
