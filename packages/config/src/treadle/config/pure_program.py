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
from .python_source import CONFIG_MODULES, is_read_base, is_stdlib, key_lines, parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    import types
    from typing import Any, TypeVar

    _Node = TypeVar("_Node", bound=ast.AST)

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
        code: the rest of the file, compiled with its own line numbers.
        closed: whether running ``code`` can give nothing but what the file's text and its
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
        "code",
        "error",
        "error_at",
        "imported",
        "packages",
        "tree",
    )

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.bases: list[tuple[str, int]] = []
        self.bindings: list[tuple[str, int, list[tuple[str, str | None]]]] = []
        self.packages: list[tuple[str, tuple[str, ...], int]] = []
        self.imported: frozenset[str] = frozenset()
        self.code: types.CodeType | None = None
        self.error: Exception | None = None
        self.error_at = 0
        self.closed = False
        self._key_lines: dict[tuple[Any, ...], int] | None = None

    def key_lines(self) -> dict[tuple[Any, ...], int]:
        """Line of each key path the file assigns (for strict mode), found on first use."""
        if self._key_lines is None:
            self._key_lines = key_lines(self.tree)
        return self._key_lines


def compile_pure(text: str, filename: str, tree: ast.Module | None = None) -> PureProgram:
    """Compile a pure-Python config; errors about its form are raised at once, except those
    that an uncompiled load raises after loading its bases (kept in ``error``)."""
    if tree is None:
        tree = parse(text, filename)
    program = PureProgram(tree)
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
        program.code = compile(tree, filename, "exec", dont_inherit=True)
        program.closed = is_closed(program.code)
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
    """``name = __lazy_object__(module, imported, location)``, every node given the import's
    position as it is made (walking the tree afterwards to fill them costs more than compiling)."""

    def at(made: _Node) -> _Node:
        return ast.copy_location(made, node)

    call = at(
        ast.Call(
            func=at(ast.Name(LAZY_NAME, ast.Load())),
            args=[
                at(ast.Constant(module)),
                at(ast.Constant(imported)),
                at(ast.Constant(f"{filename}, line {node.lineno}")),
            ],
            keywords=[],
        )
    )
    return at(ast.Assign(targets=[at(ast.Name(name, ast.Store()))], value=call))


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
    import builtins
    import sys

    stdlib = sys.stdlib_module_names
    for name in code.co_names:
        top = name.partition(".")[0]
        if name.startswith("__") and name not in _OUR_NAMES:
            return False
        if top in stdlib and top not in SAFE_MODULES:
            return False
        if name not in SAFE_BUILTINS and hasattr(builtins, name):
            return False
    for const in code.co_consts:
        is_code = hasattr(const, "co_names")
        if is_code and (const.co_name not in _COMPREHENSIONS or not is_closed(const)):
            return False
    return True
