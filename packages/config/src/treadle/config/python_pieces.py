"""Config code compiled statement by statement: each distinct statement once per process.

The configs of a toolbox repeat each other: xtuner's 593 configs hold 32 thousand top-level
statements of which 667 differ, and a config's own statements are much of what loading it
costs (compiling a short statement takes tens of microseconds, running it one or two). So the
text is cut where a line starts at column 0 with a name (``model = ...``, ``for ...``,
``def ...``; not ``else``/``except``/``elif``/``finally``, a decorator, a string or a closing
bracket), and each piece is compiled alone: once for its text, then reused in any file at any
line, the code given the file's name and lines (``CodeType.replace``).

A cut inside a statement (in a string or brackets, after a backslash or a decorator, before
``else``) leaves a piece that does not compile alone; then the caller compiles the whole text
as before, so a piece that compiled alone is a whole statement or more, and running the pieces
in order runs the text. A piece seen for the first time is compiled with the new pieces next to
it, in one call; only a piece seen a second time is compiled, and kept, on its own. Entries are
found by the text itself, so an edited file never gets a stale one. A text with a
``__future__`` import is compiled whole (the import changes how the rest compiles).
"""

from __future__ import annotations

import re
import types

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

# Where a piece may start: a line whose first character starts a name, unless it continues
# the statement before (else/elif/except/finally) or is a string with a prefix (r'...').
_PIECE = re.compile(
    r"^(?=[A-Za-z_])(?!(?:else|elif|except|finally)\b)(?![rRbBuUfF]{1,2}['\"])", re.MULTILINE
)
_CODE = types.CodeType
_TEMPLATE_NAME = "<config piece>"

# piece text -> (its code compiled alone at line 1, whether it holds nested code)
_compiled: dict[str, tuple[types.CodeType, bool]] = {}
# pieces seen once (compiled as part of a larger run of new pieces, not kept)
_seen: set[str] = set()
# Past this many entries both are emptied (a process that loads configs without end).
_LIMIT = 200_000


def compile_pieces(
    text: str,
    filename: str,
    first_line: int = 1,
    check: Callable[[str], bool] | None = None,
) -> list[types.CodeType] | None:
    """Code objects that, run in order, run ``text`` (which starts at line ``first_line`` of
    ``filename``); None where it must be compiled whole (see the module's docstring), which
    also reports its syntax errors, or where ``check`` refuses a piece's text.

    Example:
        >>> codes = compile_pieces('a = 1\\nb = [a]\\n', 'c.py')
        >>> namespace = {}
        >>> for code in codes:
        ...     exec(code, namespace)
        >>> namespace['b'], codes[-1].co_filename
        ([1], 'c.py')
    """
    if "__future__" in text:
        return None
    if not text:
        return []
    if len(_compiled) > _LIMIT or len(_seen) > _LIMIT:
        _compiled.clear()
        _seen.clear()
    starts = [m.start() for m in _PIECE.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    starts.append(len(text))
    codes: list[types.CodeType] = []
    line = first_line
    new_start = new_line = -1  # the run of new pieces not compiled yet
    try:
        for i in range(len(starts) - 1):
            start, end = starts[i], starts[i + 1]
            piece = text[start:end]
            if check is not None and not check(piece):
                return None
            found = _compiled.get(piece)
            if found is None and piece in _seen:
                found = _compiled[piece] = _template(piece)
            if found is not None:
                if new_start >= 0:
                    codes.append(_compile_at(text[new_start:start], filename, new_line))
                    new_start = -1
                codes.append(_moved(found, filename, line - 1))
            else:
                _seen.add(piece)
                if new_start < 0:
                    new_start, new_line = start, line
            line += text.count("\n", start, end)
        if new_start >= 0:
            codes.append(_compile_at(text[new_start:], filename, new_line))
    except (SyntaxError, ValueError):
        return None
    return codes


# `_base_ = ...` at the start of a line, and anywhere (a keyword argument too).
_BASE_LINE = re.compile(r"^_base_\s*=(?!=)", re.MULTILINE)
_BASE_ANY = re.compile(r"\b_base_\s*=(?!=)")


def compile_text_style(
    text: str, filename: str
) -> tuple[list[tuple[str, int]] | None, list[types.CodeType]] | None:
    """A text-style config's ``_base_`` entries (``(path, line)``, None without any) and the
    code of the rest, in pieces; None where the text must be parsed whole: it imports or uses
    ``with`` (which may make it pure-Python), sets ``_base_`` other than at the start of a
    line, or does not split (``compile_pieces``).

    Example:
        >>> bases, codes = compile_text_style("_base_ = ['b.py']\\nx = 1\\n", 'c.py')
        >>> bases, len(codes)
        ([('b.py', 1)], 1)
    """
    from .python_source import may_be_pure, split_base

    if may_be_pure(text):
        return None
    matches = list(_BASE_LINE.finditer(text))
    if len(matches) != len(_BASE_ANY.findall(text)):
        return None
    bases: list[tuple[str, int]] | None = None
    codes: list[types.CodeType] = []
    done, done_line = 0, 1  # offset and line where the text not yet compiled starts
    for match in matches:
        start = match.start()
        if start > done:
            before = compile_pieces(text[done:start], filename, done_line)
            if before is None:
                return None
            codes.extend(before)
        line = done_line + text.count("\n", done, start)
        following = _PIECE.search(text, match.end())
        end = following.start() if following else len(text)
        statement = _parse_at(text[start:end], filename, line)
        if statement is None:
            return None
        found, _ = split_base(statement, filename)
        if bases is None:  # the first `_base_ = ...` counts, as in a parse of the whole file
            bases = found
        if statement.body:  # more statements on its line
            codes.append(compile(statement, filename, "exec", 0, True))
        done, done_line = end, line + text.count("\n", start, end)
    rest = compile_pieces(text[done:], filename, done_line)
    if rest is None:
        return None
    codes.extend(rest)
    return bases, codes


def _parse_at(source: str, filename: str, line: int) -> Any:
    import ast

    try:
        return ast.parse("\n" * (line - 1) + source, filename)
    except (SyntaxError, ValueError):
        return None


def _template(piece: str) -> tuple[types.CodeType, bool]:
    code = compile(piece, _TEMPLATE_NAME, "exec", 0, True)
    return code, _has_nested(code)


def _has_nested(code: types.CodeType) -> bool:
    return any(type(const) is _CODE for const in code.co_consts)


def _compile_at(source: str, filename: str, line: int) -> types.CodeType:
    # Blank lines before it give the code the lines the source has in the file.
    return compile("\n" * (line - 1) + source, filename, "exec", 0, True)


def moved(code: types.CodeType, filename: str, shift: int = 0) -> types.CodeType:
    """``code`` (and the code nested in it) given ``filename`` and ``shift`` more lines."""
    return _moved((code, _has_nested(code)), filename, shift)


def _moved(found: tuple[types.CodeType, bool], filename: str, shift: int) -> types.CodeType:
    code, nested = found
    if not nested:
        return code.replace(co_filename=filename, co_firstlineno=code.co_firstlineno + shift)
    return _moved_deep(code, filename, shift)


def _moved_deep(code: types.CodeType, filename: str, shift: int) -> types.CodeType:
    consts: Any = tuple(
        _moved_deep(const, filename, shift) if type(const) is _CODE else const
        for const in code.co_consts
    )
    return code.replace(
        co_filename=filename, co_firstlineno=code.co_firstlineno + shift, co_consts=consts
    )


def clear() -> None:
    """Forget every piece (source_cache.clear calls this)."""
    _compiled.clear()
    _seen.clear()
