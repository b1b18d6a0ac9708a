"""Pure-Python configs (MMEngine's ``lazy_import`` mode).

Bases are imported inside ``with read_base():`` (``from .base import *``, relative or from an
installed package); other imports of non-stdlib modules become ``LazyObject`` assignments, so a
config can name classes of packages that are not imported while it loads. There is no merging:
the child's code changes the base values it imported, as ordinary Python.
"""

from __future__ import annotations

import ast
import os
import types

from .config_dict import ConfigDict
from .errors import ConfigCycleError, ConfigFileNotFoundError, ConfigKeyError, ConfigParsingError
from .lazy import LazyObject
from .loader import Loaded, read
from .package_path import package_dir
from .python_source import CONFIG_MODULES, is_read_base, is_stdlib, key_lines, parse, run

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .loader import Loader

_LAZY = "__lazy_object__"


class PurePythonLoader:
    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def load(self, filename: str, text: str, tree: ast.Module | None) -> Loaded:
        previous = ConfigDict.lazy
        # While configs run, reading a ConfigDict gives lazy objects back instead of importing.
        ConfigDict.lazy = True
        try:
            cfg, imported = self.parse(
                filename, tree if tree is not None else parse(text, filename)
            )
        finally:
            ConfigDict.lazy = previous
        return Loaded(cfg, text, {}, imported)

    def parse(self, filename: str, tree: ast.Module) -> tuple[ConfigDict, set]:
        body = self._inline_read_base(tree.body, filename)
        bases: dict[str, Any] = {}
        imported: set[str] = set()
        for node in body:
            if isinstance(node, ast.ImportFrom) and getattr(node, "_treadle_base", False):
                module = "." * node.level + (node.module or "")
                if module not in bases:
                    bases[module], names = self._load_base(module, filename, node.lineno)
                    imported |= names
        namespace: dict[str, Any] = {"__file__": filename, _LAZY: LazyObject}
        statements: list[ast.stmt] = []
        packages: dict[str, list[str]] = {}
        for node in body:
            statements.extend(self._transform(node, bases, namespace, imported, packages, filename))
        location = f"{filename}, line {{}}"
        for top, (modules, line) in packages.items():
            namespace[top] = LazyObject(modules, location=location.format(line))
            imported.add(top)
        defined_by_bases = set(namespace)
        tree.body = statements
        code = compile(ast.fix_missing_locations(tree), filename, "exec", dont_inherit=True)
        run(code, namespace, filename)
        result = {
            k: v
            for k, v in namespace.items()
            if not k.startswith("__") and not isinstance(v, types.ModuleType)
        }
        if self.loader.strict and bases:
            lines = key_lines(tree)
            for key in result:
                if key not in defined_by_bases and key not in imported:
                    self.loader.unknown.append((key, filename, lines.get((key,))))
        return _to_config_dict(result), imported

    @staticmethod
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
                        "only `from <config module> import ...` may appear inside "
                        "`with read_base():`",
                        filename,
                        inner.lineno,
                    )
                inner._treadle_base = True  # type: ignore[attr-defined]
                inlined.append(inner)
        return inlined

    def _load_base(self, module: str, filename: str, line: int) -> tuple[ConfigDict, set]:
        path = base_module_path(module, filename, line)
        real = os.path.realpath(path)
        chain = self.loader.chain
        if real in chain:
            cycle = " -> ".join([*chain[chain.index(real) :], real])
            raise ConfigCycleError(f"base configs import each other: {cycle}", filename, line)
        chain.append(real)
        try:
            return self.parse(path, parse(read(path), path))
        finally:
            chain.pop()

    def _transform(
        self,
        node: ast.stmt,
        bases: dict,
        namespace: dict,
        imported: set,
        packages: dict,
        filename: str,
    ) -> list[ast.stmt]:
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            if module in bases:
                _bind_base_names(node, bases[module], module, namespace, filename)
                return []
            if not node.level and is_stdlib(module):
                if any(a.name == "*" for a in node.names):
                    raise ConfigParsingError(
                        f"`from {module} import *` is not allowed in a config",
                        filename,
                        node.lineno,
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


def _bind_base_names(
    node: ast.ImportFrom, base: dict, module: str, namespace: dict, filename: str
) -> None:
    for alias in node.names:
        if alias.name == "*":
            namespace.update(dict.items(base))
            continue
        if alias.name not in base:
            from .errors import closest

            raise ConfigKeyError(
                f"base config {module} defines no {alias.name!r}{closest(alias.name, base)}",
                filename,
                node.lineno,
            )
        namespace[alias.asname or alias.name] = dict.__getitem__(base, alias.name)


def _lazy_assign(
    node: ast.stmt, name: str, module: str, imported: str | None, filename: str
) -> ast.stmt:
    call = ast.Call(
        func=ast.Name(_LAZY, ast.Load()),
        args=[
            ast.Constant(module),
            ast.Constant(imported),
            ast.Constant(f"{filename}, line {node.lineno}"),
        ],
        keywords=[],
    )
    return ast.copy_location(ast.Assign(targets=[ast.Name(name, ast.Store())], value=call), node)


def base_module_path(module: str, filename: str, line: int) -> str:
    """The file of a base config module: ``..a.b`` relative to ``filename``, ``pkg.a.b`` inside
    the installed package ``pkg``."""
    level = len(module) - len(module.lstrip("."))
    parts = module[level:].split(".")
    if level:
        folder = os.path.join(os.path.dirname(filename), *([os.pardir] * (level - 1)))
    else:
        if len(parts) < 2:
            raise ConfigParsingError(
                f"base config module {module!r} names a package, not a config file in it "
                "(e.g. `from mypkg.configs.base import *`)",
                filename,
                line,
            )
        folder = package_dir(parts[0])
        if folder is None:
            raise ConfigFileNotFoundError(
                f"base config {module}: package {parts[0]!r} is not installed", filename, line
            )
        parts = parts[1:]
    path = os.path.normpath(os.path.join(folder, *parts[:-1], parts[-1] + ".py"))
    if not os.path.isfile(path):
        raise ConfigFileNotFoundError(f"base config {module} not found: {path}", filename, line)
    return path


def _to_config_dict(value: Any) -> Any:
    if isinstance(value, dict):
        converted = ConfigDict()
        for key, item in dict.items(value):
            dict.__setitem__(converted, key, _to_config_dict(item))
        return converted
    if isinstance(value, list):
        return [_to_config_dict(v) for v in value]
    if type(value) is tuple:
        return tuple(_to_config_dict(v) for v in value)
    return value
