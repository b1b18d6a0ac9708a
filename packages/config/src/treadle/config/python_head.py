"""A pure-Python config split into its head, parsed, and the rest, compiled straight from text.

Compiling a pure-Python config rewrites only its top-level imports and ``with read_base():``
blocks, which come first in a config: the head. Parsing the whole file into Python AST objects
costs more than compiling it, and most of a config is the values after its imports, so only the
head is parsed; the rest is compiled from its text, at its own line numbers. The split is used
only where it cannot change what the file means: the head must parse on its own, and the rest
must compile on its own and hold no word ``import`` or ``with`` and no ``_base_`` (not even in
a string or a comment: any statement the compilation would rewrite or refuse has one); otherwise
the caller parses the whole file, as it would without the split.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    import types

# A line with code at column 0 (not a comment, nor a closing bracket of the line before).
_TOP_LEVEL_CODE = re.compile(r"^[^\s#)\]}]", re.MULTILINE)
#: The attribute of a head's AST that holds where the rest of the text begins.
REST_AT = "treadle_rest_at"
# Statements the compilation of a pure-Python config rewrites, at the start of a line.
_HEAD_KEYWORDS = ("from", "import", "with")


def head_end(text: str) -> int | None:
    """Offset of the first line of code after the last top-level import or ``with``, when the
    text after it holds nothing the compilation would rewrite; None when there is no such split.

    Example:
        >>> text = 'from a import B\\n\\nmodel = dict(type=B)\\n'
        >>> text[head_end(text):]
        'model = dict(type=B)\\n'
    """
    last = max(_last_line_starting_with(text, word) for word in _HEAD_KEYWORDS)
    if last < 0 or "__future__" in text:  # a future import changes how the rest compiles
        return None
    line_end = text.find("\n", last)
    code = _TOP_LEVEL_CODE.search(text, line_end + 1) if line_end >= 0 else None
    if code is None:
        return None
    start = code.start()
    if (
        "_base_" in text[start:]
        or _holds_word(text, start, "import")
        or _holds_word(text, start, "with")
    ):
        return None
    return start


def _last_line_starting_with(text: str, word: str) -> int:
    """Offset of the last line that starts with the keyword ``word``, or -1."""
    end = len(text)
    while (at := text.rfind(word, 0, end)) >= 0:
        if (at == 0 or text[at - 1] == "\n") and not _word_char(text, at + len(word)):
            return at
        end = at
    return -1


def _holds_word(text: str, start: int, word: str) -> bool:
    """Whether ``word`` is in the text from ``start`` on as a word of its own."""
    while (at := text.find(word, start)) >= 0:
        if not _word_char(text, at - 1) and not _word_char(text, at + len(word)):
            return True
        start = at + 1
    return False


def _word_char(text: str, at: int) -> bool:
    char = text[at : at + 1] if at >= 0 else ""
    return char.isalnum() or char == "_"


def parse_head(text: str, filename: str) -> ast.Module | None:
    """The head's AST, its attribute ``REST_AT`` the offset where the rest begins; None where
    the file does not split (see ``head_end``) or its head does not parse alone: then the whole
    file is parsed."""
    import ast

    end = head_end(text)
    if end is None:
        return None
    try:
        head = ast.parse(text[:end], filename)
    except (SyntaxError, ValueError):  # the whole file's parse reports it
        return None
    setattr(head, REST_AT, end)
    return head


def compile_rest(text: str, end: int, filename: str) -> types.CodeType | None:
    """The code of the text from ``end`` on, with the file's line numbers; None where it does
    not compile alone (the whole file's parse then reports what is wrong)."""
    # Blank lines before the rest: its code gets the lines it has in the file.
    source = "\n" * text.count("\n", 0, end) + text[end:]
    try:
        return compile(source, filename, "exec", 0, True)
    except (SyntaxError, ValueError):
        return None
