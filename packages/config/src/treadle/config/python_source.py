"""Python config source: parsing, telling text-style from pure-Python configs, key lines,
and running the code so that errors point at the config's own lines."""

from __future__ import annotations

import re
import sys

from .errors import (
    ConfigAttributeError,
    ConfigError,
    ConfigImportError,
    ConfigIndexError,
    ConfigKeyError,
    ConfigNameError,
    ConfigParsingError,
    ConfigSyntaxError,
    ConfigTypeError,
    ConfigValueError,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from collections.abc import Iterable
    from typing import Any

BASE_KEY = "_base_"
# Configs may import these without turning into pure-Python configs: they are this package.
CONFIG_MODULES = ("mmengine.config", "treadle.config")
_MAY_BE_PURE = re.compile(r"\bimport\b|^\s*with\b", re.MULTILINE)


def parse(text: str, filename: str) -> ast.Module:
    import ast

    try:
        return ast.parse(text, filename)
    except SyntaxError as err:
        raise ConfigSyntaxError(
            f"invalid Python: {err.msg}", filename, err.lineno, err.text, err.offset
        ) from None


def may_be_pure(text: str) -> bool:
    """Whether the source has an ``import`` or a ``with`` statement: only then may it be a
    pure-Python config (MMEngine's rule, ``is_pure_python``, needs one of them)."""
    return _MAY_BE_PURE.search(text) is not None


def config_imports_to_treadle(tree: ast.Module) -> None:
    """Point ``from mmengine.config[...] import ...`` and ``from mmengine import Config`` in
    ``tree`` at treadle.config, which provides the same names, so a text-style config that
    imports ``read_base`` (or ``Config``) from MMEngine loads whether or not MMEngine is
    installed."""
    import ast

    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and node.module
            and (
                node.module == CONFIG_MODULES[0]
                or node.module.startswith("mmengine.config.")
                or imports_config_class(node)
            )
        ):
            node.module = "treadle.config"


def imports_config_class(node: ast.ImportFrom) -> bool:
    """Whether ``node`` is ``from mmengine import Config``: MMEngine's rule lets a text-style
    config import it (to load another config while it loads) without becoming pure-Python."""
    return node.module == "mmengine" and len(node.names) == 1 and node.names[0].name == "Config"


def is_stdlib(module: str) -> bool:
    if module.startswith(CONFIG_MODULES):
        return True
    top = module.split(".")[0]
    return top in sys.stdlib_module_names or top in sys.builtin_module_names


def is_pure_python(tree: ast.Module, filename: str) -> bool:
    """MMEngine's rule: a config is pure-Python (lazy import) when, walking its AST breadth
    first, a ``with read_base()``, a relative import or an import of a non-stdlib module comes
    before any ``_base_ = ...`` assignment."""
    import ast

    # Breadth first, the top-level statements come first: they decide nearly every config,
    # without the walk's queue of every node below them.
    for nodes in (tree.body, ast.walk(tree)):
        decided = decides_pure(nodes, filename)
        if decided is not None:
            return decided
    return False


def decides_pure(nodes: Iterable[ast.AST], filename: str) -> bool | None:
    """MMEngine's rule over ``nodes`` in order: True or False where one of them decides, else
    None."""
    import ast

    for node in nodes:
        if isinstance(node, ast.Assign) and _assigns_base(node):
            return False
        if isinstance(node, ast.With):
            if not is_read_base(node):
                raise ConfigParsingError(
                    "only `with read_base():` may appear in a config", filename, node.lineno
                )
            return True
        if isinstance(node, ast.ImportFrom):
            if node.level:
                return True
            if node.module and not is_stdlib(node.module) and not imports_config_class(node):
                return True
        if isinstance(node, ast.Import) and any(not is_stdlib(a.name) for a in node.names):
            return True
    return None


def is_read_base(node: ast.With) -> bool:
    import ast

    expr = node.items[0].context_expr
    return (
        len(node.items) == 1
        and isinstance(expr, ast.Call)
        and isinstance(expr.func, (ast.Name, ast.Attribute))
        and getattr(expr.func, "id", getattr(expr.func, "attr", None)) == "read_base"
    )


def _assigns_base(node: Any) -> bool:
    import ast

    target = node.targets[0]
    return isinstance(target, ast.Name) and target.id == BASE_KEY


def split_base(tree: ast.Module, filename: str) -> tuple[list[tuple[str, int]] | None, int]:
    """Remove top-level ``_base_ = ...`` from ``tree``; return its ``(path, line)`` entries (None
    when there is none) and the line of the assignment."""
    import ast

    found = None
    body = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and _assigns_base(node):
            if found is None:
                found = node
            continue
        body.append(node)
    if found is None:
        return None, 0
    tree.body = body
    value = found.value
    try:
        try:
            evaluated = ast.literal_eval(value)  # no compile for the usual literal paths
        except ValueError:
            evaluated = eval(compile(ast.Expression(value), filename, "eval"), {})
    except Exception as err:
        raise ConfigTypeError(
            f"_base_ must be a path or a list of paths: {type(err).__name__}: {err}",
            filename,
            found.lineno,
        ) from None
    items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value]
    paths = evaluated if isinstance(evaluated, (list, tuple)) else [evaluated]
    lines = [getattr(n, "lineno", found.lineno) for n in items]
    if len(lines) != len(paths):
        lines = [found.lineno] * len(paths)
    for path, line in zip(paths, lines, strict=True):
        if not isinstance(path, str):
            raise ConfigTypeError(
                f"_base_ must be a path or a list of paths, got {path!r}", filename, line
            )
    return list(zip(paths, lines, strict=True)), found.lineno


def key_lines(tree: ast.Module) -> dict[tuple[Any, ...], int]:
    """Line of each key path a Python config assigns: top-level names, keys of ``dict(...)``
    calls and ``{...}`` literals nested in them."""
    import ast

    lines: dict[tuple[Any, ...], int] = {}

    def walk(value: Any, path: tuple[Any, ...]) -> None:
        if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "dict":
            for kw in value.keywords:
                if kw.arg is not None:
                    here = (*path, kw.arg)
                    lines[here] = kw.value.lineno if not kw.lineno else kw.lineno
                    walk(kw.value, here)
        elif isinstance(value, ast.Dict):
            for key, item in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant):
                    here = (*path, key.value)
                    lines[here] = key.lineno
                    walk(item, here)

    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                lines.setdefault((target.id,), node.lineno)
                walk(node.value, (target.id,))
    return lines


_TRANSLATED: dict[type[Exception], type[ConfigError]] = {
    AttributeError: ConfigAttributeError,
    KeyError: ConfigKeyError,
    NameError: ConfigNameError,
    TypeError: ConfigTypeError,
    ValueError: ConfigValueError,
    IndexError: ConfigIndexError,
    ImportError: ConfigImportError,
}


def run(code: Any, namespace: dict[str, Any], filename: str) -> None:
    """Execute a config's code; an error in it names the config's file and line."""
    try:
        exec(code, namespace)
    except ConfigError as err:
        if err.filename is None:  # raised by a ConfigDict read in the config: add the line
            err.filename, err.lineno = filename, _line_in(err, filename)
        raise
    except Exception as err:
        raise translate(err, filename) from err


def _line_in(err: BaseException, filename: str) -> int | None:
    """The last line of ``filename`` in the traceback of ``err``."""
    line = None
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def translate(err: Exception, filename: str) -> ConfigError:
    line = _line_in(err, filename)
    detail = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    kind = next((v for k, v in _TRANSLATED.items() if isinstance(err, k)), ConfigParsingError)
    return kind(f"{type(err).__name__}: {detail}", filename, line)
