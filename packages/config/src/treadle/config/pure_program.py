"""A pure-Python config file compiled once into what every load of it needs.

Compiling takes the config's AST apart: the imports of ``with read_base():`` become base
bindings (bound from the bases' values before the code runs), imports of non-stdlib modules
become ``LazyObject`` assignments, and the rest is compiled to one code object. Nothing in a
``PureProgram`` depends on other files or on the environment, so it is kept in the source cache
and reused while the file's text is the same; ``pure_python`` runs it on every load.
"""

from __future__ import annotations

import ast

from .errors import ConfigParsingError
from .python_head import REST_AT, compile_rest, parse_head
from .python_source import CONFIG_MODULES, is_read_base, is_stdlib, key_lines, parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    import types
    from typing import Any

#: The name lazy imports call in the compiled code.
LAZY_NAME = "__lazy_object__"


class PureProgram:
    """One compiled pure-Python config.

    Attributes:
        bases: ``(module, line)`` of each base module, in order, each once.
        bindings: ``(module, line, [(name, asname), ...])`` of each import of a base module, in
            order; the name ``*`` binds all of its values.
        packages: ``(top, modules, line)`` for ``import a.b`` of a non-stdlib package: ``top``
            becomes a ``LazyObject`` of the modules.
        imported: names the file imports (not config keys).
        codes: the file's code, with the file's line numbers, to run in order: its rewritten
            statements and, where the file splits (python_head.py), the text after its head.
        names: for a closed program, every name its code uses (attributes included): the
            only values of its namespace that it can reach.
        closed: whether running ``codes`` can give nothing but what the file's text and its
            bases' values determine (see ``is_closed``), so its values may be reused.
        error: an error the file holds, raised once its bases are loaded and the first
            ``error_at`` bindings made: where loading the file statement by statement meets it.

    Example:
        >>> program = compile_pure('from pkg.nets import Net\\nmodel = dict(type=Net)\\n', 'c.py')
        >>> program.imported, program.bases
        (frozenset({'Net'}), [])
    """

    __slots__ = (
        "_key_lines",
        "bases",
        "bindings",
        "closed",
        "codes",
        "error",
        "error_at",
        "filename",
        "imported",
        "names",
        "packages",
        "text",
    )

    def __init__(self, text: str, filename: str) -> None:
        # The text, not the tree: an AST kept per file would hold more objects than the
        # configs' values, and every garbage collection of the process would walk them.
        self.text = text
        self.filename = filename
        self.bases: list[tuple[str, int]] = []
        self.bindings: list[tuple[str, int, list[tuple[str, str | None]]]] = []
        self.packages: list[tuple[str, tuple[str, ...], int]] = []
        self.imported: frozenset[str] = frozenset()
        self.codes: tuple[types.CodeType, ...] = ()
        self.error: Exception | None = None
        self.error_at = 0
        self.closed = False
        self.names: frozenset[str] = frozenset()
        self._key_lines: dict[tuple[Any, ...], int] | None = None

    def key_lines(self) -> dict[tuple[Any, ...], int]:
        """Line of each key path the file assigns (for strict mode), found on first use."""
        if self._key_lines is None:
            self._key_lines = key_lines(parse(self.text, self.filename))
        return self._key_lines


def compile_pure(text: str, filename: str, tree: ast.Module | None = None) -> PureProgram:
    """Compile a pure-Python config; errors about its form are raised at once, except those
    that an uncompiled load raises after loading its bases (kept in ``error``)."""
    rest: types.CodeType | None = None
    if tree is None:
        tree = parse_head(text, filename)
    rest_at: int | None = getattr(tree, REST_AT, None)
    if rest_at is not None:
        rest = compile_rest(text, rest_at, filename)
    if tree is None or (rest_at is not None and rest is None):
        tree = parse(text, filename)
    program = PureProgram(text, filename)
    body = _inline_read_base(tree.body, filename)
    base_nodes = [n for n in body if getattr(n, "_treadle_base", False)]
    modules: dict[str, int] = {}
    for node in base_nodes:
        assert isinstance(node, ast.ImportFrom)
        modules.setdefault("." * node.level + (node.module or ""), node.lineno)
    program.bases = list(modules.items())
    imported: set[str] = set()
    packages: dict[str, tuple[list[str], int]] = {}
    statements: list[ast.stmt] = []
    try:
        for node in body:
            statements.extend(_transform(node, program, modules, imported, packages, filename))
        tree.body = statements
        code = compile(tree, filename, "exec", dont_inherit=True)
        program.codes = (code,) if rest is None else (code, rest)
        program.closed = all(is_closed(c) for c in program.codes)
        if program.closed:
            program.names = frozenset().union(*(_names_in(c) for c in program.codes))
    except Exception as err:  # raised by the loader, once the bases are loaded
        program.error, program.error_at = err, len(program.bindings)
    program.packages = [(top, tuple(mods), line) for top, (mods, line) in packages.items()]
    program.imported = frozenset(imported | set(packages))
    return program


def _inline_read_base(body: list[ast.stmt], filename: str) -> list[ast.stmt]:
    inlined: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_base_" for t in node.targets
        ):
            raise ConfigParsingError(
                "_base_ = ... cannot be used in a pure-Python config (one with read_base() "
                "or imports); import the bases inside `with read_base():`",
                filename,
                node.lineno,
            )
        if not isinstance(node, ast.With):
            inlined.append(node)
            continue
        if not is_read_base(node):
            raise ConfigParsingError(
                "only `with read_base():` may appear in a config", filename, node.lineno
            )
        for inner in node.body:
            if not isinstance(inner, ast.ImportFrom) or inner.module is None:
                raise ConfigParsingError(
                    "only `from <config module> import ...` may appear inside `with read_base():`",
                    filename,
                    inner.lineno,
                )
            inner._treadle_base = True  # type: ignore[attr-defined]
            inlined.append(inner)
    return inlined


def _transform(
    node: ast.stmt,
    program: PureProgram,
    bases: dict[str, int],
    imported: set[str],
    packages: dict[str, tuple[list[str], int]],
    filename: str,
) -> list[ast.stmt]:
    if isinstance(node, ast.ImportFrom):
        module = "." * node.level + (node.module or "")
        if module in bases:
            program.bindings.append((module, node.lineno, [(a.name, a.asname) for a in node.names]))
            return []
        if not node.level and is_stdlib(module):
            if any(a.name == "*" for a in node.names):
                raise ConfigParsingError(
                    f"`from {module} import *` is not allowed in a config", filename, node.lineno
                )
            if module.startswith(CONFIG_MODULES):
                node.module = "treadle.config"  # read_base works without MMEngine installed
            imported.update(a.asname or a.name for a in node.names)
            return [node]
        assigns = []
        for alias in node.names:
            if alias.name == "*":
                raise ConfigParsingError(
                    f"`from {module} import *` is allowed only for base configs, inside "
                    "`with read_base():`",
                    filename,
                    node.lineno,
                )
            name = alias.asname or alias.name
            imported.add(name)
            assigns.append(_lazy_assign(node, name, module, alias.name, filename))
        return assigns
    if isinstance(node, ast.Import):
        kept, out = [], []
        for alias in node.names:
            if is_stdlib(alias.name):
                kept.append(alias)
                if alias.asname:
                    imported.add(alias.asname)
            elif alias.asname:
                imported.add(alias.asname)
                out.append(_lazy_assign(node, alias.asname, alias.name, None, filename))
            else:
                top = alias.name.split(".")[0]
                modules, _ = packages.setdefault(top, ([], node.lineno))
                modules.append(alias.name)
        if kept:
            node.names = kept
            out.insert(0, node)
        return out
    return [node]


def _lazy_assign(
    node: ast.stmt, name: str, module: str, imported: str | None, filename: str
) -> ast.stmt:
    """``name = __lazy_object__(module, imported, location)``, every node made at the import's
    position (walking the tree afterwards to fill them costs more than compiling)."""
    at: dict[str, Any] = {
        "lineno": node.lineno,
        "col_offset": node.col_offset,
        "end_lineno": node.end_lineno,
        "end_col_offset": node.end_col_offset,
    }
    location = f"{filename}, line {node.lineno}"
    call = ast.Call(
        ast.Name(LAZY_NAME, _LOAD, **at),
        [ast.Constant(module, **at), ast.Constant(imported, **at), ast.Constant(location, **at)],
        [],
        **at,
    )
    return ast.Assign([ast.Name(name, _STORE, **at)], call, **at)


_LOAD, _STORE = ast.Load(), ast.Store()


# What a closed program may use: builtins and stdlib modules whose results depend only on their
# arguments. Anything else (os.environ, time, random, open, print, functions that keep the
# namespace they were made in) makes the file run again on every load.
SAFE_BUILTINS = frozenset(
    (
        "abs", "all", "any", "bool", "dict", "divmod", "enumerate", "filter", "float",
        "frozenset", "int", "isinstance", "len", "list", "map", "max", "min", "pow", "range",
        "reversed", "round", "set", "sorted", "str", "sum", "tuple", "zip",
    )
)  # fmt: skip
SAFE_MODULES = frozenset(("collections", "math", "itertools", "fractions", "string"))
_OUR_NAMES = frozenset(("__file__", LAZY_NAME))
_COMPREHENSIONS = frozenset(("<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"))


def is_closed(code: types.CodeType) -> bool:
    """Whether compiled config code computes its values from its own text and its bases'
    values alone. Read off the names the code uses (globals, attributes, imported modules):
    no builtin or stdlib module outside the safe lists, no dunder name, no function or class
    (a comprehension is fine). A config key that shares a builtin's name only makes it run
    every time."""
    names = code.co_names
    if not _unsafe_names().isdisjoint(names):
        return False
    joined = " ".join(names)
    if "__" in joined or "." in joined:  # rare outside the head: only then one by one
        for name in names:
            if name.startswith("__") and name not in _OUR_NAMES:
                return False
            if "." in name and name.partition(".")[0] in _unsafe_names():
                return False
    for const in code.co_consts:
        if type(const) is _CODE and (const.co_name not in _COMPREHENSIONS or not is_closed(const)):
            return False
    return True


_CODE = type(is_closed.__code__)


def _names_in(code: types.CodeType) -> set[str]:
    """Every name the code (and code nested in it) uses: what a closed program can reach."""
    names = {*code.co_names, *code.co_varnames, *code.co_cellvars, *code.co_freevars}
    for const in code.co_consts:
        if type(const) is _CODE:
            names |= _names_in(const)
    return names


_unsafe: list[frozenset[str]] = []


def _unsafe_names() -> frozenset[str]:
    """Builtins and stdlib modules outside the safe lists (made on first use, then reused)."""
    if not _unsafe:
        import builtins
        import sys

        unsafe_builtins = set(dir(builtins)) - SAFE_BUILTINS
        _unsafe.append(frozenset(unsafe_builtins | (sys.stdlib_module_names - SAFE_MODULES)))
    return _unsafe[0]
