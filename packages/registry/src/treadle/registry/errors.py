"""Errors of treadle.registry that are also the AssertionError MMEngine raises in their place.

MMEngine's Registry checks some arguments with ``assert`` (the parent, the scope); code written
for it catches AssertionError. treadle raises the type that names the problem and MMEngine's as
well, so that both kinds of ``except`` clause catch it.

Example:
    >>> from treadle.registry import Registry
    >>> try:
    ...     Registry('cats', parent='animals', scope='cats')
    ... except AssertionError as error:
    ...     isinstance(error, TypeError)
    True
"""

from __future__ import annotations


class RegistryArgumentError(TypeError, AssertionError):
    """An argument of Registry of the wrong type, where MMEngine asserts the type."""


class CfgKeyError(KeyError):
    """A key a cfg needs is missing. Its message reads as written: KeyError would show the
    ``repr`` of it, escaping its quotes."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


__all__ = ["CfgKeyError", "RegistryArgumentError"]
