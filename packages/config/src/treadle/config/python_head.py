"""A pure-Python config split into its head, parsed, and the rest, compiled straight from text.

Compiling a pure-Python config rewrites only its top-level imports and ``with read_base():``
blocks, which come first in a config: the head. Parsing the whole file into Python AST objects
costs more than compiling it, and most of a config is the values after its imports, so only the
head is parsed; the rest is compiled from its text, at its own line numbers, statement by
statement (python_pieces.py). The split is used only where it cannot change what the file means:
the head must parse on its own, and the rest must compile on its own and hold no statement the
compilation would rewrite or refuse (an import, a ``with``, ``_base_ = ...``): each statement
whose text has the word ``import`` or ``with`` or ``_base_`` (in a string or a comment, most
often) is parsed once per text to see that it holds none; otherwise the caller parses the whole
file, as it would without the split.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    import types

# A line with code at column 0 (not a comment, nor a closing bracket of the line before).
_TOP_LEVEL_CODE = re.compile(r"^[^\s#)\]}]", re.MULTILINE)
# Statements the compilation of a pure-Python config rewrites, at the start of a line.
_HEAD_KEYWORDS = ("from", "import", "with")


def head_end(text: str) -> int | None:
    """Offset of the first line of code after the last top-level import or ``with`` (the end of
    the text when there is none); None when the text has no such line, or a ``__future__``
    import (which changes how the rest compiles).

    Example:
        >>> text = 'from a import B\\n\\nmodel = dict(type=B)\\n'
        >>> text[head_end(text):]
        'model = dict(type=B)\\n'
    """
    last = max(_last_line_starting_with(text, word) for word in _HEAD_KEYWORDS)
    if last < 0 or "__future__" in text:
        return None
    line_end = text.find("\n", last)
    code = _TOP_LEVEL_CODE.search(text, line_end + 1) if line_end >= 0 else None
    return len(text) if code is None else code.start()


def _last_line_starting_with(text: str, word: str) -> int:
    """Offset of the last line that starts with the keyword ``word``, or -1."""
    end = len(text)
    while (at := text.rfind(word, 0, end)) >= 0:
        if (at == 0 or text[at - 1] == "\n") and not _word_char(text, at + len(word)):
            return at
        end = at
    return -1


def _word_char(text: str, at: int) -> bool:
    char = text[at : at + 1] if at >= 0 else ""
    return char.isalnum() or char == "_"


def compile_rest(text: str, end: int, filename: str) -> list[types.CodeType] | None:
    """The code of the text from ``end`` on, with the file's line numbers, as pieces
    (python_pieces.py) or one code object; None where it holds a statement the compilation
    rewrites or refuses, or does not compile alone (the whole file's parse then reports what is
    wrong).

    Example:
        >>> text = 'from a import B\\nx = "with import"\\n'
        >>> len(compile_rest(text, 16, 'c.py'))
        1
        >>> compile_rest('from a import B\\nif x:\\n    import os\\n', 16, 'c.py') is None
        True
    """
    from .python_pieces import compile_pieces

    rest = text[end:]
    lines_before = text.count("\n", 0, end)
    pieces = compile_pieces(rest, filename, lines_before + 1, plain_statement)
    if pieces is not None or _REWRITTEN_WORD.search(rest):
        return pieces
    # Blank lines before the rest: its code gets the lines it has in the file.
    try:
        return [compile("\n" * lines_before + rest, filename, "exec", 0, True)]
    except (SyntaxError, ValueError):
        return None


# Words of the statements a pure-Python config's compilation rewrites or refuses.
_REWRITTEN_WORD = re.compile(r"\b(?:import|with)\b|_base_")
# piece text -> whether it holds none of those statements (found by a parse, once per text)
_plain: dict[str, bool] = {}


def plain_statement(piece: str) -> bool:
    """Whether ``piece`` (top-level statements) holds no import, no ``with`` and no
    ``_base_ = ...``: then its text compiles as it is."""
    if "import" not in piece and "with" not in piece and "_base_" not in piece:
        return True
    if _REWRITTEN_WORD.search(piece) is None:
        return True
    found = _plain.get(piece)
    if found is None:
        found = _plain[piece] = _holds_none(piece)
    return found


def _holds_none(piece: str) -> bool:
    import ast

    try:
        tree = ast.parse(piece)
    except (SyntaxError, ValueError):
        return False
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_base_" for t in node.targets
        ):
            return False
    rewritten = (ast.Import, ast.ImportFrom, ast.With, ast.AsyncWith)
    return not any(isinstance(node, rewritten) for node in ast.walk(tree))


def clear() -> None:
    """Forget which statements hold none of the rewritten ones (source_cache.clear)."""
    _plain.clear()
