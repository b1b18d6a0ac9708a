"""Pure-Python configs (MMEngine's ``lazy_import`` mode).

Bases are imported inside ``with read_base():`` (``from .base import *``, relative or from an
installed package); other imports of non-stdlib modules become ``LazyObject`` assignments, so a
config can name classes of packages that are not imported while it loads. There is no merging:
the child's code changes the base values it imported, as ordinary Python.

Each file is compiled once per process (``pure_program``, kept in the source cache while its
text is the same) and its code run on every load, so values are new each time.
"""

from __future__ import annotations

import os
import types

from .config_dict import ConfigDict
from .errors import ConfigCycleError, ConfigFileNotFoundError, ConfigKeyError, ConfigParsingError
from .lazy import LazyObject
from .loader import Loaded, closed_cycle, read
from .package_path import package_dir
from .pure_program import LAZY_NAME, PureProgram, compile_pure
from .pure_values import thaw, thaw_keys, to_config_dicts
from .python_source import run
from .source_cache import cached

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from typing import Any

    from .loader import Loader


class PurePythonLoader:
    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def load(self, filename: str, text: str, tree: ast.Module | None) -> Loaded:
        previous = ConfigDict.lazy
        # While configs run, reading a ConfigDict gives lazy objects back instead of importing.
        ConfigDict.lazy = True
        try:
            result = self.run(filename, program_of(filename, text, tree))
        finally:
            ConfigDict.lazy = previous
        cfg = thaw(result.values) if result.kept else result.values
        return Loaded(cfg, text, {}, set(result.imported))

    def run(self, filename: str, program: PureProgram) -> Result:
        base_results = {}
        for module, line in program.bases:
            base_results[module] = self._load_base(module, filename, line)
        keep = (
            program.closed and not self.loader.strict and all(r.kept for r in base_results.values())
        )
        if keep:
            kept = _kept.get(filename)
            if kept is not None and kept.made_of(program, base_results):
                return kept
        # Values kept for reuse are copied before the code here can change them: all of them,
        # or where the code is closed, those it names (it can reach no other value; the rest
        # stay shared with the bases' kept values, which nobody changes).
        shared_ids: set[int] = set()
        if keep:
            bases = _thaw_named(program, base_results, shared_ids)
        else:
            bases = {m: thaw(r.values) if r.kept else r.values for m, r in base_results.items()}
        imported: set[Any] = set()
        for r in base_results.values():
            imported |= r.imported
        namespace: dict[str, Any] = {"__file__": filename, LAZY_NAME: LazyObject}
        bindings = program.bindings
        if program.error is not None:
            bindings = bindings[: program.error_at]
        for module, line, names in bindings:
            _bind_base_names(module, line, names, bases[module], namespace, filename)
        if program.error is not None:
            import copy

            raise copy.copy(program.error).with_traceback(None)
        for top, modules, line in program.packages:
            namespace[top] = LazyObject(list(modules), location=f"{filename}, line {line}")
        imported |= program.imported
        defined_by_bases = set(namespace) if self.loader.strict and bases else None
        for code in program.codes:
            run(code, namespace, filename)
        values = {
            k: v
            for k, v in namespace.items()
            if not k.startswith("__") and not isinstance(v, types.ModuleType)
        }
        shared = {k for k in values.keys() - program.names if id(values[k]) in shared_ids}
        if defined_by_bases is not None:
            lines = program.key_lines()
            for key in values:
                if key not in defined_by_bases and key not in imported:
                    self.loader.unknown.append((key, filename, lines.get((key,))))
        result = Result(to_config_dicts(values, shared), imported, program, base_results, keep)
        if keep:
            _kept[filename] = result
        return result

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
    """The values of one pure-Python config file, and what they were made from.

    ``kept``: the values are kept for reuse (the file is closed, see ``PureProgram.closed``, and
    so are its bases): nobody may change them, loads copy them first.
    """

    __slots__ = ("bases", "imported", "kept", "program", "values")

    def __init__(
        self,
        values: ConfigDict,
        imported: set[Any],
        program: PureProgram,
        bases: dict[str, Result],
        kept: bool,
    ) -> None:
        self.values = values
        self.imported = imported
        self.program = program
        self.bases = bases
        self.kept = kept

    def made_of(self, program: PureProgram, bases: dict[str, Result]) -> bool:
        """Whether running ``program`` over ``bases`` gives these values again: the same
        compiled text (the source cache gives one program per text) over the same base values."""
        return (
            self.program is program
            and self.bases.keys() == bases.keys()
            and all(self.bases[m] is r for m, r in bases.items())
        )


# filename -> the latest values of that closed file, made again when its text or bases change.
_kept: dict[str, Result] = {}


def program_of(filename: str, text: str, tree: ast.Module | None = None) -> PureProgram:
    """The compiled program of a pure-Python config file, made once per text."""
    return cached("pure", filename, text, lambda: compile_pure(text, filename, tree))


def _thaw_named(
    program: PureProgram, base_results: dict[str, Result], shared_ids: set[int]
) -> dict[str, Any]:
    """Each base's kept values, those that the program's code names copied (once per base, as
    a whole base's copy would give them), the others shared; their ids go to ``shared_ids``."""
    named: dict[str, set[str]] = {m: set() for m in base_results}
    for module, _, names in program.bindings:
        values = base_results[module].values
        for name, asname in names:
            if name == "*":
                named[module].update(k for k in values if k in program.names)
            elif (asname or name) in program.names:
                named[module].add(name)
    bases = {}
    for module, result in base_results.items():
        bases[module] = thaw_keys(result.values, named[module])
        shared_ids.update(id(v) for k, v in dict.items(result.values) if k not in named[module])
    return bases


def _bind_base_names(
    module: str,
    line: int,
    names: list[tuple[str, str | None]],
    base: dict[str, Any],
    namespace: dict[str, Any],
    filename: str,
) -> None:
    for name, asname in names:
        if name == "*":
            namespace.update(dict.items(base))
            continue
        if name not in base:
            from .errors import closest

            raise ConfigKeyError(
                f"base config {module} defines no {name!r}{closest(name, base)}",
                filename,
                line,
            )
        namespace[asname or name] = dict.__getitem__(base, name)


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
