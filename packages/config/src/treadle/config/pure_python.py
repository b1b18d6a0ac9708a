"""Pure-Python configs (MMEngine's ``lazy_import`` mode).

Bases are imported inside ``with read_base():`` (``from .base import *``, relative or from an
installed package); other imports of non-stdlib modules become ``LazyObject`` assignments, so a
config can name classes of packages that are not imported while it loads. There is no merging:
the child's code changes the base values it imported, as ordinary Python.

Each file is compiled once per process (``pure_program``, kept in the source cache while its
text is the same) and its code run on every load, so values are new each time. They stay as
the code made them (plain dicts and lists); a child's code gets ``ConfigDict`` views of the
names it imports (pure_values.py), and ``Config`` copies the whole once, when it is used.
"""

from __future__ import annotations

import os
import types

from .config_dict import ConfigDict
from .errors import ConfigCycleError, ConfigFileNotFoundError, ConfigKeyError, ConfigParsingError
from .lazy import LazyAttr, LazyObject
from .loader import Loaded, closed_cycle, read
from .package_path import package_dir
from .pure_program import LAZY_NAME, LazyAt, PureProgram, compile_pure
from .pure_values import bind
from .python_source import run
from .source_cache import cached

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .loader import Loader


class PurePythonLoader:
    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def load(self, filename: str, text: str, tree: Any) -> Loaded:
        previous = ConfigDict.lazy
        # While configs run, reading a ConfigDict gives lazy objects back instead of importing.
        ConfigDict.lazy = True
        try:
            result = self.run(filename, program_of(filename, text, tree))
        finally:
            ConfigDict.lazy = previous
        # The values as the code left them: Config copies them before any change.
        lazies = list(result.lazies.values())
        return Loaded(result.values, text, {}, set(result.imported), lazies, pure=True)

    def run(self, filename: str, program: PureProgram) -> Result:
        base_results = {}
        for module, line in program.bases:
            base_results[module] = self._load_base(module, filename, line)
        imported: set[Any] = set()
        lazies: dict[int, Any] = {}
        for r in base_results.values():
            imported |= r.imported
            lazies.update(r.lazies)
        namespace: dict[str, Any] = {"__file__": filename, LAZY_NAME: LazyAt(filename)}
        bindings = program.bindings
        if program.error is not None:
            bindings = bindings[: program.error_at]
        binder = _Binder(program.reach, bindings)
        for module, line, names in bindings:
            binder.bind(module, line, names, base_results[module].values, namespace, filename)
        if program.error is not None:
            import copy

            raise copy.copy(program.error).with_traceback(None)
        for top, modules, line in program.packages:
            namespace[top] = LazyObject(list(modules), location=f"{filename}, line {line}")
        imported |= program.imported
        defined_by_bases = set(namespace) if self.loader.strict and base_results else None
        for code in program.codes:
            run(code, namespace, filename)
        values = {
            k: v
            for k, v in namespace.items()
            if not k.startswith("__") and not isinstance(v, types.ModuleType)
        }
        for value in values.values():
            if type(value) in _LAZY:
                lazies[id(value)] = value
        if defined_by_bases is not None:
            lines = program.key_lines()
            for key in values:
                if key not in defined_by_bases and key not in imported:
                    self.loader.unknown.append((key, filename, lines.get((key,))))
        return Result(values, imported, lazies)

    def _load_base(self, module: str, filename: str, line: int) -> Result:
        path = base_module_path(module, filename, line)
        chain = self.loader.chain
        cycle = closed_cycle(chain, path)
        if cycle:
            raise ConfigCycleError(f"base configs import each other: {cycle}", filename, line)
        chain.append(path)
        try:
            try:
                text = read(path)
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                raise ConfigFileNotFoundError(
                    f"base config {module} not found: {path}", filename, line
                ) from None
            return self.run(path, program_of(path, text))
        finally:
            chain.pop()


class Result:
    """The values of one pure-Python config file (as its code left them), the names it
    imported, and the lazy objects the values likely hold (by id; copies find them by
    identity, fast_copy.py)."""

    __slots__ = ("imported", "lazies", "values")

    def __init__(self, values: dict[str, Any], imported: set[Any], lazies: dict[int, Any]):
        self.values = values
        self.imported = imported
        self.lazies = lazies


_LAZY = (LazyObject, LazyAttr)


def program_of(filename: str, text: str, tree: Any = None) -> PureProgram:
    """The compiled program of a pure-Python config file, made once per text."""
    return cached("pure", filename, text, lambda: compile_pure(text, filename, tree))


class _Binder:
    """Binds what a file imports from its bases: each base value to one ``ConfigDict`` view
    (``bind``), the same under every name it is imported as. A value the file's code cannot
    reach under any of its names (``PureProgram.reach``: star imports bind every name of a
    base) is bound as it is: it can only go into the file's values, which are copied anyway."""

    def __init__(self, reach: frozenset[str] | None, bindings: list[Any]) -> None:
        self.reach = reach
        self.bound: dict[tuple[str, str], Any] = {}
        self.reached: set[tuple[str, str]] = set()  # (module, name) reached under an alias
        self.star: set[str] = set()
        for module, _, names in bindings:
            for name, asname in names:
                if name == "*":
                    self.star.add(module)
                elif reach is not None and (asname or name) in reach:
                    self.reached.add((module, name))

    def bind(
        self,
        module: str,
        line: int,
        names: list[tuple[str, str | None]],
        base: dict[str, Any],
        namespace: dict[str, Any],
        filename: str,
    ) -> None:
        for name, asname in names:
            if name == "*":
                keys: Any = base
            elif name not in base:
                from .errors import closest

                raise ConfigKeyError(
                    f"base config {module} defines no {name!r}{closest(name, base)}",
                    filename,
                    line,
                )
            else:
                keys = (name,)
            for key in keys:
                namespace[asname or key] = self._value(module, base, key)

    def _value(self, module: str, base: dict[str, Any], key: str) -> Any:
        found = self.bound.get((module, key), _UNBOUND)
        if found is _UNBOUND:
            raw = dict.__getitem__(base, key)
            reach = self.reach
            if (
                reach is None
                or (module, key) in self.reached
                or (module in self.star and key in reach)
            ):
                found = bind(raw)
            else:
                found = raw
            self.bound[module, key] = found
        return found


_UNBOUND = object()


def base_module_path(module: str, filename: str, line: int) -> str:
    """The file of a base config module: ``..a.b`` relative to ``filename``, ``pkg.a.b`` inside
    the installed package ``pkg``. Whether it exists is found by reading it."""
    known = _relative_paths.get((module, filename))
    if known is not None:
        return known
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
        installed = package_dir(parts[0])
        if installed is None:
            raise ConfigFileNotFoundError(
                f"base config {module}: package {parts[0]!r} is not installed", filename, line
            )
        folder = installed
        parts = parts[1:]
    path = os.path.normpath(os.path.join(folder, *parts[:-1], parts[-1] + ".py"))
    if level:  # a function of the two names alone; a package's folder may change
        _relative_paths[module, filename] = path
    return path


# (relative module, the file importing it) -> path of the module's file
_relative_paths: dict[tuple[str, str], str] = {}
