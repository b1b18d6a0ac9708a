"""MMEngine's AST rewriting of pure-Python configs, for code that runs it itself
(``mmengine.config.utils.ImportTransformer``, ``_gather_abs_import_lazyobj``,
``RemoveAssignFromAST``).

treadle's loader does not use this module: it compiles a pure-Python config once and keeps the
result (``pure_program.py``), rewriting the same imports the same way. These classes rewrite a
tree the caller parsed and then runs with a namespace that holds ``LazyObject``:

- ``from pkg.mod import Name [as alias]`` becomes ``alias = LazyObject('pkg.mod', 'Name', loc)``;
- ``import pkg.mod as alias`` becomes ``alias = LazyObject('pkg.mod', location=loc)``;
- ``from <base module> import names`` (a key of ``base_dict``) binds the base's values into
  ``global_dict`` and is removed;
- imports of the standard library (and of ``mmengine.config`` / ``treadle.config``) are kept;
- ``_gather_abs_import_lazyobj`` turns the top-level ``import pkg.a`` / ``import pkg.b`` into
  one ``pkg = LazyObject(['pkg.a', 'pkg.b'], location=loc)``.

Imports are rewritten wherever they are (inside ``try``, ``if``, functions): an optional
package that is missing fails only where its object is built.
"""

from __future__ import annotations

import ast
from typing import Any

from .errors import ConfigParsingError
from .python_source import is_stdlib


def _is_builtin_module(module_name: str) -> bool:
    """Whether a config's import of ``module_name`` runs as it is instead of becoming a
    ``LazyObject``: a module of the standard library, or the config package itself
    (``mmengine.config``, ``treadle.config``). Relative imports never are.

    treadle tells the standard library by ``sys.stdlib_module_names``; MMEngine looks where the
    module's file is installed (outside site-packages), which the two agree on for the standard
    library.

    Example:
        >>> _is_builtin_module('os.path'), _is_builtin_module('numpy'), _is_builtin_module('.a')
        (True, False, False)
    """
    return not module_name.startswith(".") and is_stdlib(module_name)


def _lazy_object_assign(name: str, arguments: list[Any], location: str, at: ast.AST) -> ast.Assign:
    """``name = LazyObject(*arguments, location=location)``, every node placed at ``at``'s
    source span (the import it replaces; without an end, ``ast.fix_missing_locations`` would
    give a node one before its start)."""
    args: list[ast.expr] = [
        ast.List([ast.Constant(v) for v in value], ast.Load())
        if isinstance(value, list)
        else ast.Constant(value)
        for value in arguments
    ]
    call = ast.Call(
        func=ast.Name(id="LazyObject", ctx=ast.Load()),
        args=args,
        keywords=[ast.keyword(arg="location", value=ast.Constant(location))],
    )
    assign = ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=call)
    for node in ast.walk(assign):
        ast.copy_location(node, at)
    return assign


class ImportTransformer(ast.NodeTransformer):
    """Rewrites the imports of a pure-Python config's AST into ``LazyObject`` assignments and
    binds what it imports from base configs (see the module's docstring).

    Args:
        global_dict: the namespace the rewritten code will run in; names imported from base
            configs are put in it while the tree is visited.
        base_dict: the values of each base config, by the module name the config imports it
            as (``'._base_.schedule'``).
        filename: the config's path, for the ``location`` of each ``LazyObject``.

    Attributes:
        imported_obj: the names the imports bind (not config keys).

    Example:
        >>> from treadle.config import LazyObject
        >>> tree = ast.parse('from .base import lr\\nfrom pkg.nets import Net as N\\n')
        >>> namespace = {'LazyObject': LazyObject}
        >>> tree = ImportTransformer(namespace, {'.base': {'lr': 0.1}}).visit(tree)
        >>> exec(compile(ast.fix_missing_locations(tree), 'cfg.py', 'exec'), namespace)
        >>> namespace['lr'], namespace['N'].dotted
        (0.1, 'pkg.nets.Net')
    """

    def __init__(
        self,
        global_dict: dict[str, Any],
        base_dict: dict[str, dict[str, Any]] | None = None,
        filename: str | None = None,
    ) -> None:
        super().__init__()
        self.global_dict = global_dict
        self.base_dict = base_dict if base_dict is not None else {}
        self.filename = filename
        self.imported_obj: set[str] = set()

    def _location(self, node: ast.AST) -> str:
        return f"{self.filename}, line {node.lineno}"  # type: ignore[attr-defined]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.ImportFrom | list[ast.Assign] | None:
        """A base import binds into ``global_dict`` and goes (None); a standard-library import
        stays; any other becomes one ``LazyObject`` assignment per name."""
        module = "." * node.level + (node.module or "")
        if _is_builtin_module(module):
            for alias in node.names:
                if alias.name == "*":
                    raise ConfigParsingError(
                        f"Cannot import * from non-base config: `from {module} import *` "
                        "brings in names nobody asked for; import the names the config uses",
                        self.filename,
                        node.lineno,
                    )
                self.imported_obj.add(alias.asname or alias.name)
            return node
        if module in self.base_dict:
            base = self.base_dict[module]
            for alias in node.names:
                if alias.name == "*":
                    self.global_dict.update(base)
                else:
                    self.global_dict[alias.asname or alias.name] = base[alias.name]
            return None
        assigns = []
        for alias in node.names:
            if alias.name == "*":
                raise ConfigParsingError(
                    f"Illegal syntax in config! `from xxx import *` is only allowed for base "
                    f"configs, inside `with read_base():` (got `from {module} import *`)",
                    self.filename,
                    node.lineno,
                )
            name = alias.asname or alias.name
            self.imported_obj.add(name)
            # alias nodes have a position of their own from Python 3.10 on: the line of the name.
            at = alias if hasattr(alias, "lineno") else node
            assigns.append(
                _lazy_object_assign(name, [module, alias.name], self._location(at), node)
            )
        return assigns

    def visit_Import(self, node: ast.Import) -> ast.stmt | list[ast.stmt]:
        """``import a.b as c`` becomes ``c = LazyObject('a.b')`` (a standard-library module is
        imported as it is); ``import a.b`` stays, for ``_gather_abs_import_lazyobj`` to gather
        at the top level (elsewhere it runs). Several modules on one line are each handled so
        (MMEngine accepts only one)."""
        kept: list[ast.alias] = []
        out: list[ast.stmt] = []
        for alias in node.names:
            if alias.asname is None:
                kept.append(alias)
                continue
            self.imported_obj.add(alias.asname)
            if _is_builtin_module(alias.name):
                kept.append(alias)
                continue
            out.append(_lazy_object_assign(alias.asname, [alias.name], self._location(node), node))
        if not out:
            return node
        if kept:
            node.names = kept
            out.insert(0, node)
        return out


def _gather_abs_import_lazyobj(
    tree: ast.Module, filename: str | None = None
) -> tuple[ast.Module, set[str]]:
    """Replace the top-level ``import pkg.a`` statements (no ``as``) of packages outside the
    standard library by one ``pkg = LazyObject(['pkg.a', ...], location=...)`` per package,
    put first in the module; return the tree and the package names bound.

    Example:
        >>> tree, names = _gather_abs_import_lazyobj(ast.parse('import os\\nimport numpy.fft\\n'))
        >>> names, [type(n).__name__ for n in tree.body]
        ({'numpy'}, ['Assign', 'Import'])
    """
    modules: dict[str, list[str]] = {}
    first: dict[str, ast.AST] = {}
    body: list[ast.stmt] = []
    for node in tree.body:
        if not isinstance(node, ast.Import):
            body.append(node)
            continue
        kept = []
        for alias in node.names:
            if alias.asname is not None or _is_builtin_module(alias.name):
                kept.append(alias)
                continue
            top = alias.name.split(".")[0]
            modules.setdefault(top, []).append(alias.name)
            first.setdefault(top, alias if hasattr(alias, "lineno") else node)
        if kept:
            node.names = kept
            body.append(node)
    assigns = []
    for top, names in modules.items():
        at = first[top]
        location = f"{filename}, line {at.lineno}"  # type: ignore[attr-defined]
        assigns.append(_lazy_object_assign(top, [names], location, at))
    tree.body = assigns + body
    return tree, set(modules)


class RemoveAssignFromAST(ast.NodeTransformer):
    """Removes the assignments to the name ``key`` (MMEngine uses it to drop ``_base_ = ...``
    from a text-style config before running it).

    Example:
        >>> tree = RemoveAssignFromAST('_base_').visit(ast.parse('_base_ = "a.py"\\nx = 1\\n'))
        >>> ast.unparse(tree)
        'x = 1'
    """

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key = key

    def visit_Assign(self, node: ast.Assign) -> ast.Assign | None:
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == self.key:
            return None
        return node
