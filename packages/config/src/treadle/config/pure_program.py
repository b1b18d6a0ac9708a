"""A pure-Python config file compiled once into what every load of it needs.

Compiling takes the config's AST apart: the imports of ``with read_base():`` become base
bindings (bound from the bases' values before the code runs), imports of non-stdlib modules
become ``LazyObject`` assignments, and the rest is compiled to one code object. Nothing in a
``PureProgram`` depends on other files or on the environment, so it is kept in the source cache
and reused while the file's text is the same; ``pure_python`` runs it on every load.
"""

from __future__ import annotations

import ast
import types

from .errors import ConfigParsingError
from .lazy import LazyObject
from .python_head import compile_rest, head_end
from .python_source import (
    CONFIG_MODULES,
    decides_pure,
    is_read_base,
    is_stdlib,
    key_lines,
    parse,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The name lazy imports call in the compiled code: a ``LazyAt`` of the file.
LAZY_NAME = "__lazy_object__"


class LazyAt:
    """Makes the lazy imports of one file: ``LazyAt(filename)(module, name, line)``."""

    __slots__ = ("filename",)

    def __init__(self, filename: str) -> None:
        self.filename = filename

    def __call__(self, module: str, imported: str | None, line: int) -> LazyObject:
        return LazyObject(module, imported, f"{self.filename}, line {line}")


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
        error: an error the file holds, raised once its bases are loaded and the first
            ``error_at`` bindings made: where loading the file statement by statement meets it.
        reach: every name the code uses (in functions and comprehensions too), or None where
            it may reach names it does not write (``globals()``, ``eval``, ...): a value
            imported under another name can only go into the file's values as it is.

    Example:
        >>> program = compile_pure('from pkg.nets import Net\\nmodel = dict(type=Net)\\n', 'c.py')
        >>> program.imported, program.bases
        (frozenset({'Net'}), [])
    """

    __slots__ = (
        "_key_lines",
        "bases",
        "bindings",
        "codes",
        "error",
        "error_at",
        "filename",
        "imported",
        "packages",
        "reach",
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
        self.reach: frozenset[str] | None = None
        self._key_lines: dict[tuple[Any, ...], int] | None = None

    def key_lines(self) -> dict[tuple[Any, ...], int]:
        """Line of each key path the file assigns (for strict mode), found on first use."""
        if self._key_lines is None:
            self._key_lines = key_lines(parse(self.text, self.filename))
        return self._key_lines


def compile_pure(text: str, filename: str, tree: Any = None) -> PureProgram:
    """Compile a pure-Python config; errors about its form are raised at once, except those
    that an uncompiled load raises after loading its bases (kept in ``error``). ``tree``: the
    file's AST, or ``head_of``'s split of it, where the caller has one."""
    if not isinstance(tree, ast.Module):
        split = tree if tree is not None else head_of(text, filename)
        if split is not None and split[1].compiled is not None:
            rest = compile_rest(text, split[0], filename)
            if rest is not None:
                return split[1].compiled.program(text, filename, rest)
        tree = parse(text, filename)
    program = PureProgram(text, filename)
    code = _compile_body(tree, program, filename)
    if code is not None:
        program.codes = (code,)
        program.reach = reach_of(program.codes)
    return program


def _compile_body(tree: ast.Module, program: PureProgram, filename: str) -> types.CodeType | None:
    """Rewrite ``tree``'s imports and compile it, filling ``program``'s bases, bindings,
    packages and names; None where an error is kept in ``program.error``."""
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
    code = None
    try:
        for node in body:
            statements.extend(_transform(node, program, modules, imported, packages, filename))
        tree.body = statements
        code = compile(tree, filename, "exec", dont_inherit=True)
    except Exception as err:  # raised by the loader, once the bases are loaded
        program.error, program.error_at = err, len(program.bindings)
    program.packages = [(top, tuple(mods), line) for top, (mods, line) in packages.items()]
    program.imported = frozenset(imported | set(packages))
    return code


class Head:
    """What the head of a pure-Python config's text (python_head.py) gives, kept for every
    file with that head (toolboxes repeat their imports: xtuner's 516 split configs have 77
    heads): ``pure``, MMEngine's rule over its statements (True, False or None: undecided);
    ``compiled``: its program, for a head that is pure and compiles without an error (else
    each file is compiled whole, which reports the error with its own name)."""

    __slots__ = ("compiled", "pure")

    def __init__(self, pure: bool | None, compiled: HeadProgram | None) -> None:
        self.pure = pure
        self.compiled = compiled


class HeadProgram:
    """A head compiled under a stand-in file name: each file gets the code moved to its name."""

    __slots__ = ("code", "head")

    def __init__(self, head: PureProgram, code: types.CodeType) -> None:
        self.head = head
        self.code = code

    def program(self, text: str, filename: str, rest: list[types.CodeType]) -> PureProgram:
        from .python_pieces import moved

        head = self.head
        program = PureProgram(text, filename)
        program.bases, program.bindings = head.bases, head.bindings  # nobody changes them
        program.packages, program.imported = head.packages, head.imported
        program.codes = (moved(self.code, filename), *rest)
        program.reach = reach_of(program.codes)
        return program


# Names through which code can reach names it does not write.
_DYNAMIC = frozenset(
    (
        "globals", "locals", "vars", "eval", "exec", "dir", "__import__", "__builtins__",
        "__dict__", "sys", "inspect", "builtins", "importlib", "f_globals", "f_locals",
    )
)  # fmt: skip
# id(co_names) -> (co_names, names of that code and the code in it): code moved to another file
# keeps its co_names (CodeType.replace), so a statement met in many files is looked at once.
_names: dict[int, tuple[tuple[str, ...], frozenset[str]]] = {}


def reach_of(codes: tuple[types.CodeType, ...]) -> frozenset[str] | None:
    """Every name ``codes`` use; None where they may reach others (``_DYNAMIC``)."""
    reach = frozenset().union(*(_names_in(code) for code in codes))
    return None if not reach.isdisjoint(_DYNAMIC) else reach


def _names_in(code: types.CodeType) -> frozenset[str]:
    key = code.co_names
    found = _names.get(id(key)) if key else None  # () is one object for all code
    if found is not None and found[0] is key:
        return found[1]
    names = {*key, *code.co_varnames, *code.co_cellvars, *code.co_freevars}
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _names_in(const)
    frozen = frozenset(names)
    if key:
        if len(_names) > 200_000:
            _names.clear()
        _names[id(key)] = (key, frozen)
    return frozen


_STAND_IN = "<config head>"
# head text -> Head; found by the text itself, so an edited file never gets a stale one
_heads: dict[str, Head] = {}


def head_of(text: str, filename: str) -> tuple[int, Head] | None:
    """Where the head of ``text`` ends and what it gives; None where the text does not split
    or its head does not parse alone (the whole file is then parsed). An error in the form of
    the head's statements (``decides_pure``) is raised, naming ``filename``.

    Example:
        >>> end, head = head_of('from pkg import Net\\nmodel = dict(type=Net)\\n', 'c.py')
        >>> end, head.pure, head.compiled.head.imported
        (20, True, frozenset({'Net'}))
    """
    end = head_end(text)
    if end is None:
        return None
    source = text[:end]
    head = _heads.get(source)
    if head is None:
        head = _make_head(source, filename)
        if head is None:
            return None
        if len(_heads) > 20_000:
            _heads.clear()
        _heads[source] = head
    return end, head


def _make_head(source: str, filename: str) -> Head | None:
    try:
        tree = ast.parse(source, filename)
    except (SyntaxError, ValueError):  # the whole file's parse reports it
        return None
    pure = decides_pure(tree.body, filename)
    if pure is not True:
        return Head(pure, None)
    program = PureProgram(source, _STAND_IN)
    try:
        code = _compile_body(tree, program, _STAND_IN)
    except ConfigParsingError:  # raised at compile time: each file raises it with its name
        return Head(True, None)
    if code is None:
        return Head(True, None)
    return Head(True, HeadProgram(program, code))


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
    nested: bool = False,
) -> list[ast.stmt]:
    """The statements that replace ``node``: imports of non-stdlib names become lazy
    assignments, at the top level and (as MMEngine rewrites every import of the file) inside
    ``try``, ``if``, loops, ``with`` blocks, functions and classes, so an optional package that
    is missing does not fail the load. ``nested``: ``node`` is inside such a block."""
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
            assigns.append(_lazy_assign(node, name, module, alias.name))
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
                out.append(_lazy_assign(node, alias.asname, alias.name, None))
            elif nested:
                # MMEngine makes `import a.b` lazy only at the top level (gathered by package);
                # in a block it runs, and `except ImportError:` sees what it raises.
                kept.append(alias)
            else:
                top = alias.name.split(".")[0]
                modules, _ = packages.setdefault(top, ([], node.lineno))
                modules.append(alias.name)
        if kept:
            node.names = kept
            out.insert(0, node)
        return out
    if isinstance(node, _BLOCK_STATEMENTS):
        for block in _blocks(node):
            statements: list[ast.stmt] = []
            for inner in block:
                statements.extend(
                    _transform(inner, program, bases, imported, packages, filename, True)
                )
            # A block that only imported base values is left with nothing: Python needs a pass.
            block[:] = statements or [ast.Pass(**_position(block[0]))]
    return [node]


# Statements holding blocks of statements (match and try* where this Python has them).
_BLOCK_STATEMENTS: tuple[type[ast.stmt], ...] = tuple(
    getattr(ast, name)
    for name in (
        "If", "For", "AsyncFor", "While", "Try", "TryStar", "With", "AsyncWith",
        "FunctionDef", "AsyncFunctionDef", "ClassDef", "Match",
    )
    if hasattr(ast, name)
)  # fmt: skip


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists of a compound statement: its body, else and finally blocks, and
    those of its except handlers and match cases."""
    blocks = [getattr(node, field, None) for field in ("body", "orelse", "finalbody")]
    parts = [*getattr(node, "handlers", ()), *getattr(node, "cases", ())]
    blocks.extend(part.body for part in parts)
    return [block for block in blocks if block]


def _position(node: ast.stmt) -> dict[str, Any]:
    return {
        "lineno": node.lineno,
        "col_offset": node.col_offset,
        "end_lineno": node.end_lineno,
        "end_col_offset": node.end_col_offset,
    }


def _lazy_assign(node: ast.stmt, name: str, module: str, imported: str | None) -> ast.stmt:
    """``name = __lazy_object__(module, imported, line)``, every node made at the import's
    position (walking the tree afterwards to fill them costs more than compiling). The file's
    name is not in the code (``LazyAt`` adds it), so files with one head share its code."""
    at = _position(node)
    call = ast.Call(
        ast.Name(LAZY_NAME, _LOAD, **at),
        [ast.Constant(module, **at), ast.Constant(imported, **at), ast.Constant(node.lineno, **at)],
        [],
        **at,
    )
    return ast.Assign([ast.Name(name, _STORE, **at)], call, **at)


_LOAD, _STORE = ast.Load(), ast.Store()


def clear() -> None:
    """Forget every compiled head (source_cache.clear)."""
    _heads.clear()
    _names.clear()
