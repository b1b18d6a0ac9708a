"""Port a project from MMEngine to treadle: rewrite its ``mmengine`` imports to treadle's.

``port_project(path)`` rewrites, in every ``.py`` file under ``path`` (configs included), the
import statements that name ``mmengine``:

- ``from mmengine.visualization import Visualizer`` → ``from treadle.visual import Visualizer``
  (each ``mmengine.X`` module maps to the treadle module that provides its names,
  :data:`MODULE_MAP`; a deeper module such as ``mmengine.utils.misc`` maps through its
  longest known parent);
- ``from mmengine import Config, MODELS`` → ``from treadle.runner.mmengine_names import ...``
  and ``import mmengine`` → ``import treadle.runner.mmengine_names as mmengine``: that module
  gathers MMEngine's top-level names and its submodules (``mmengine.dist.get_rank()`` keeps
  working);
- ``import mmengine.X as y`` → ``import <treadle module> as y``; ``import mmengine.X`` →
  ``import treadle.runner.mmengine_names as mmengine`` (code keeps writing ``mmengine.X.name``).

Names that live elsewhere in treadle than in MMEngine (:data:`NAME_MOVES`) get an import of
their own. The default scope ``'mmengine'`` (``default_scope = 'mmengine'`` in configs,
``init_default_scope('mmengine')``) becomes ``'treadle'``, the scope of treadle's root
registries. Nothing else changes: other strings, comments and code are left as they are, and
a file without ``mmengine`` imports or scope is not touched.

Example:
    >>> report = port_project('my_project', dry_run=True)
    >>> print(report.summary())  # doctest: +SKIP
    2 of 5 Python files would change (7 rewritten statements); 0 files could not be parsed
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

#: The treadle module that provides the public names of each MMEngine module.
MODULE_MAP: dict[str, str] = {
    "mmengine": "treadle.runner.mmengine_names",
    "mmengine.analysis": "treadle.runner.analysis",
    "mmengine.config": "treadle.config",
    "mmengine.dataset": "treadle.runner.dataset",
    "mmengine.device": "treadle.runner.device",
    "mmengine.dist": "treadle.dist",
    "mmengine.evaluator": "treadle.runner.evaluator",
    "mmengine.fileio": "treadle.fileio",
    "mmengine.fileio.backends": "treadle.fileio.backends",
    "mmengine.hooks": "treadle.runner.hooks",
    "mmengine.hub": "treadle.runner.hub",
    "mmengine.infer": "treadle.runner.infer",
    "mmengine.logging": "treadle.logging",
    "mmengine.model": "treadle.runner.model",
    "mmengine.model.wrappers": "treadle.runner.model.wrappers",
    "mmengine.optim": "treadle.runner.optim",
    "mmengine.optim.scheduler": "treadle.runner.optim",
    "mmengine.registry": "treadle.runner.registry",
    "mmengine.runner": "treadle.runner",
    "mmengine.runner.checkpoint": "treadle.runner.checkpoint",
    "mmengine._strategy": "treadle.runner.strategies",
    "mmengine.structures": "treadle.runner.structures",
    "mmengine.testing": "treadle.runner.testing",
    "mmengine.utils": "treadle.runner.utils",
    "mmengine.utils.dl_utils": "treadle.runner.utils.dl_utils",
    "mmengine.visualization": "treadle.visual",
}

#: Names whose treadle home differs from the module :data:`MODULE_MAP` gives, by
#: ``(mmengine module, name)``.
NAME_MOVES: dict[tuple[str, str], str] = {
    ("mmengine.utils", "ManagerMixin"): "treadle.logging",
    ("mmengine.utils", "ManagerMeta"): "treadle.logging",
    ("mmengine.utils.dl_utils", "collect_env"): "treadle.runner.runner.env",
    ("mmengine.utils.dl_utils", "set_multi_processing"): "treadle.runner.runner.env",
}


def treadle_module(mmengine_module: str) -> str | None:
    """The treadle module for ``mmengine_module`` (through its longest known parent), or None
    when the name is not ``mmengine`` or one of its modules.

    Example:
        >>> treadle_module('mmengine.utils.misc')
        'treadle.runner.utils'
    """
    parts = mmengine_module.split(".")
    if parts[0] != "mmengine":
        return None
    for end in range(len(parts), 0, -1):
        target = MODULE_MAP.get(".".join(parts[:end]))
        if target is not None:
            return target
    return None


@dataclass
class FileChange:
    """One ported file: its path, and each rewritten statement as ``(line, old, new)``."""

    path: Path
    statements: list[tuple[int, str, str]] = field(default_factory=list)


@dataclass
class PortReport:
    """What :func:`port_project` changed (or would change, with ``dry_run``)."""

    root: Path
    dry_run: bool
    scanned: int = 0
    changed: list[FileChange] = field(default_factory=list)
    #: Files that are not valid Python (``(path, error)``); they are left as they are.
    skipped: list[tuple[Path, str]] = field(default_factory=list)

    def summary(self) -> str:
        verb = "would change" if self.dry_run else "changed"
        count = sum(len(change.statements) for change in self.changed)
        return (
            f"{len(self.changed)} of {self.scanned} Python files {verb} ({count} rewritten "
            f"statements); {len(self.skipped)} files could not be parsed"
        )


def port_source(source: str, filename: str = "<source>") -> tuple[str, list[tuple[int, str, str]]]:
    """``source`` with its ``mmengine`` imports rewritten, and the rewritten statements.

    Raises SyntaxError (naming ``filename``) when ``source`` is not valid Python.

    Example:
        >>> port_source('from mmengine.dist import get_rank\\n')[0]
        'from treadle.dist import get_rank\\n'
    """
    tree = ast.parse(source, filename=filename)
    lines = source.splitlines(keepends=True)
    offsets = _line_offsets(lines)
    # (start, end, replacement, line) of each rewritten statement, in characters of `source`.
    edits: list[tuple[int, int, str, int]] = []
    scopes = {id(node) for node in _scope_literals(tree)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            new = _port_from_import(node)
        elif isinstance(node, ast.Import):
            new = _port_import(node)
        elif isinstance(node, ast.Constant) and id(node) in scopes:
            # The string 'mmengine' as a default scope: the same literal, naming treadle's scope.
            start = offsets[node.lineno - 1] + _char_offset(lines[node.lineno - 1], node.col_offset)
            end_line = lines[node.end_lineno - 1]
            end = offsets[node.end_lineno - 1] + _char_offset(end_line, node.end_col_offset)
            literal = source[start:end]
            edits.append((start, end, literal.replace("mmengine", "treadle"), node.lineno))
            continue
        else:
            continue
        if new is None:
            continue
        start = offsets[node.lineno - 1] + _char_offset(lines[node.lineno - 1], node.col_offset)
        end_line = lines[node.end_lineno - 1]
        end = offsets[node.end_lineno - 1] + _char_offset(end_line, node.end_col_offset)
        if isinstance(new, str):
            # Only the module changes: replace its name and keep the statement's layout and
            # comments (a parenthesized list over several lines stays as it is).
            module = _FROM_MODULE.match(source, start)
            if module is not None:
                statement = source[start:end]
                ported = (
                    statement[: module.start(1) - start] + new + statement[module.end(1) - start :]
                )
                edits.append((start, end, ported, node.lineno))
                continue
            new = [_from_statement(new, node)]
        indent = lines[node.lineno - 1][: _char_offset(lines[node.lineno - 1], node.col_offset)]
        # A statement that does not start its line (after ';') continues with '; ' not a newline.
        separator = "\n" + indent if indent.strip() == "" else "; "
        edits.append((start, end, separator.join(new), node.lineno))
    if not edits:
        return source, []
    edits.sort()
    changes = []
    pieces = []
    position = 0
    for start, end, text, line in edits:
        pieces.append(source[position:start])
        pieces.append(text)
        changes.append((line, source[start:end], text))
        position = end
    pieces.append(source[position:])
    return "".join(pieces), changes


def port_project(
    path: str | os.PathLike, *, dry_run: bool = False, encoding: str = "utf-8"
) -> PortReport:
    """Rewrite the ``mmengine`` imports of every ``.py`` file under ``path`` (or of the file
    ``path``) to treadle's, in place; with ``dry_run=True`` only report what would change.

    Files that are not valid Python are left as they are and listed in ``report.skipped``.
    Hidden directories (``.git``, ``.venv``) and ``__pycache__`` are not visited.

    Example:
        >>> report = port_project('my_project')  # doctest: +SKIP
        >>> for change in report.changed:  # doctest: +SKIP
        ...     print(change.path, len(change.statements))
    """
    root = Path(path)
    if not root.exists():
        raise FileNotFoundError(f"port_project: {os.fspath(path)!r} does not exist")
    if root.is_file() and root.suffix != ".py":
        raise ValueError(f"port_project rewrites Python files, and {os.fspath(path)!r} is not one")
    report = PortReport(root=root, dry_run=dry_run)
    for file in _python_files(root):
        report.scanned += 1
        raw = file.read_bytes()
        try:
            source = raw.decode(encoding)
            new, statements = port_source(source, os.fspath(file))
        except (SyntaxError, UnicodeDecodeError, ValueError) as error:
            report.skipped.append((file, f"{type(error).__name__}: {error}"))
            continue
        if not statements:
            continue
        report.changed.append(FileChange(file, statements))
        if not dry_run:
            file.write_bytes(new.encode(encoding))
    return report


# `from` and the dotted module name at the start of a from-import statement.
_FROM_MODULE = re.compile(r"from\s+(\w+(?:\s*\.\s*\w+)*)")


def _python_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    found = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(
            d for d in subdirectories if not d.startswith(".") and d != "__pycache__"
        )
        found.extend(Path(directory, name) for name in sorted(files) if name.endswith(".py"))
    return found


def _scope_literals(tree: ast.AST) -> list[ast.Constant]:
    """The string constants 'mmengine' that name the default scope: ``default_scope =
    'mmengine'``, ``default_scope='mmengine'`` as a keyword or dict key, and the first argument
    of ``init_default_scope``."""
    found: list[ast.expr | None] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == "default_scope" for t in node.targets):
                found.append(node.value)
        elif isinstance(node, ast.keyword) and node.arg == "default_scope":
            found.append(node.value)
        elif isinstance(node, ast.Dict):
            found.extend(
                value
                for key, value in zip(node.keys, node.values, strict=True)
                if isinstance(key, ast.Constant) and key.value == "default_scope"
            )
        elif isinstance(node, ast.Call) and node.args:
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name == "init_default_scope":
                found.append(node.args[0])
    return [node for node in found if isinstance(node, ast.Constant) and node.value == "mmengine"]


def _port_from_import(node: ast.ImportFrom) -> str | list[str] | None:
    """None (not an mmengine import), the one treadle module all its names come from, or the
    statements that import them from several."""
    if node.level or not node.module:
        return None  # relative imports stay inside the user's package
    target = treadle_module(node.module)
    if target is None:
        return None
    homes = [NAME_MOVES.get((node.module, alias.name), target) for alias in node.names]
    if len(set(homes)) == 1:
        return homes[0]
    by_module: dict[str, list[ast.alias]] = {}
    for alias, home in zip(node.names, homes, strict=True):
        by_module.setdefault(home, []).append(alias)
    return [_from_statement(module, node, names) for module, names in by_module.items()]


def _from_statement(module: str, node: ast.ImportFrom, names: list[ast.alias] | None = None) -> str:
    parts = [
        alias.name if alias.asname is None else f"{alias.name} as {alias.asname}"
        for alias in (node.names if names is None else names)
    ]
    return f"from {module} import {', '.join(parts)}"


def _port_import(node: ast.Import) -> list[str] | None:
    if not any(treadle_module(alias.name) for alias in node.names):
        return None
    statements = []
    kept = []
    for alias in node.names:
        target = treadle_module(alias.name)
        if target is None:
            kept.append(alias.name if alias.asname is None else f"{alias.name} as {alias.asname}")
        elif alias.asname is not None:
            statements.append(f"import {target} as {alias.asname}")
        else:
            # `import mmengine.dist` binds `mmengine`: code goes on to write mmengine.dist.x.
            line = "import treadle.runner.mmengine_names as mmengine"
            if line not in statements:
                statements.append(line)
    if kept:
        statements.insert(0, f"import {', '.join(kept)}")
    return statements


def _line_offsets(lines: list[str]) -> list[int]:
    offsets = []
    total = 0
    for line in lines:
        offsets.append(total)
        total += len(line)
    offsets.append(total)
    return offsets


def _char_offset(line: str, byte_offset: int) -> int:
    # ast reports columns in UTF-8 bytes; slicing needs characters.
    return len(line.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore"))
