"""Loading a config file and, recursively, its ``_base_`` files into one dict.

One ``Loader`` serves one ``Config.fromfile`` call: it keeps the chain of files being loaded (to
report ``_base_`` cycles) and, in strict mode, the keys children set that no base defines.
Every call reads every file; what parsing and compiling a file gives is kept in the source
cache while the file's text is the same (``source_cache``), its values made again each time.
"""

from __future__ import annotations

import os
import types
import warnings

from .config_dict import ConfigDict, wrap
from .errors import (
    ConfigCycleError,
    ConfigFileNotFoundError,
    ConfigFormatError,
    ConfigKeyError,
    ConfigParsingError,
    StrictModeError,
)
from .merge import dotted, merge_a_into_b
from .package_path import is_package_path, resolve_package_path
from .source_cache import cached, read_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from typing import Any

EXTENSIONS = (".py", ".json", ".yaml", ".yml")
BASE_KEY = "_base_"
DEPRECATION_KEY = "_deprecation_"
_DROPPED_TYPES = (types.FunctionType, types.ModuleType)


class _Parsed:
    """Whether a Python config is a pure-Python config, and what its compilation can start
    from: where its head (python_head.py) decides that it is one, the head's split of it (no
    parse of the file: heads are parsed once per text, pure_program.head_of); otherwise its
    AST."""

    __slots__ = ("pure", "tree")

    def __init__(self, filename: str, text: str) -> None:
        from .pure_program import head_of
        from .python_source import is_pure_python, parse

        split = head_of(text, filename)
        if split is not None and split[1].pure:
            self.pure = True
            self.tree: Any = split
            return
        tree = parse(text, filename)
        self.pure = is_pure_python(tree, filename)
        self.tree = tree


class Loaded:
    """What loading one file (with its bases) gives.

    ``cfg_dict`` holds the values as the files' code left them: plain dicts (and the
    ``ConfigDict`` views the code read through), one object possibly under several keys;
    ``Config`` copies them before anything can change them. ``lazies``: the lazy objects the
    values likely hold (copies find them by identity, fast_copy.py). ``pure``: made by
    pure-Python configs (whose rule converts every dict subclass)."""

    __slots__ = ("cfg_dict", "env_variables", "file", "imported_names", "lazies", "pure", "text")

    def __init__(
        self,
        cfg_dict: dict[str, Any],
        text: str,
        env_variables: dict[str, Any],
        imported_names: set[Any],
        lazies: list[Any] | tuple[Any, ...] = (),
        pure: bool = False,
    ) -> None:
        self.file: str | None = None
        self.cfg_dict = cfg_dict
        self.text = text
        self.env_variables = env_variables
        self.imported_names = imported_names
        self.lazies = lazies
        self.pure = pure


def check_extension(filename: str, where: tuple[Any, ...] = (None, None)) -> str:
    ext = os.path.splitext(filename)[1]
    if ext not in EXTENSIONS:
        raise ConfigFormatError(
            f"{filename}: unsupported config extension {ext or '(none)'!r}; "
            "use .py, .json, .yaml or .yml",
            *where,
        )
    return ext


def resolve(path: str, parent: str | None = None, lineno: int | None = None) -> str:
    """Absolute path of a config named by ``path`` (relative to ``parent``'s folder, or
    ``'pkg::path'``); errors name ``parent`` and ``lineno``."""
    if is_package_path(path):
        return resolve_package_path(path, parent, lineno)
    full = os.path.expanduser(path)
    if parent is not None and not os.path.isabs(full):
        full = os.path.join(os.path.dirname(parent), full)
    full = os.path.abspath(full)
    if not os.path.isfile(full):
        what = f"_base_ file {path!r}" if parent is not None else "config file"
        raise ConfigFileNotFoundError(
            f"{what} not found: {full}" if parent is not None else f"{what} not found: {path}",
            parent,
            lineno,
        )
    return full


# Every file a load reads: as bytes, its text reused while they are the same (source_cache).
read = read_text


def warn_deprecation(cfg_dict: dict[str, Any], filename: str) -> None:
    info = cfg_dict.pop(DEPRECATION_KEY, None)
    if info is None:
        return
    message = f"The config file {filename} will be deprecated in the future."
    if isinstance(info, dict):
        if "expected" in info:
            message += f" Please use {info['expected']} instead."
        if "reference" in info:
            message += f" More information can be found at {info['reference']}"
    warnings.warn(message, DeprecationWarning, stacklevel=4)


class Loader:
    def __init__(
        self,
        use_predefined_variables: bool = True,
        use_environment_variables: bool = True,
        strict: bool = False,
    ) -> None:
        self.use_predefined_variables = use_predefined_variables
        self.use_environment_variables = use_environment_variables
        self.strict = strict
        self.chain: list[str] = []
        self.unknown: list[tuple[str, str, int | None]] = []
        # lazy_import=False reads every file of the chain as text-style (as MMEngine passes it
        # on to the bases); None tells each base's style by its content.
        self.base_lazy_import: bool | None = None

    # -- entry points ------------------------------------------------------------------------

    def load(self, filename: str, lazy_import: bool | None = None) -> tuple[Loaded, bool]:
        """Load a file; returns it and whether it was read as a pure-Python config."""
        ext = check_extension(filename)
        text = read(filename)
        pure, tree = self._mode(filename, text, ext, lazy_import)
        if lazy_import is False:
            self.base_lazy_import = False
        self.chain.append(os.path.abspath(filename))
        try:
            if pure:
                from .pure_python import PurePythonLoader

                loaded = PurePythonLoader(self).load(filename, text, tree)
            else:
                loaded = self.load_text_style(filename, text, ext, tree)
        finally:
            self.chain.pop()
        self.raise_unknown()
        return loaded, pure

    def load_string(self, text: str, ext: str) -> tuple[Loaded, bool]:
        """Load config text; ``_base_`` paths are relative to the working directory."""
        if ext not in EXTENSIONS:
            raise ConfigFormatError(
                f"unsupported config format {ext!r}; use .py, .json, .yaml or .yml"
            )
        filename = os.path.join(os.getcwd(), f"<string>{ext}")
        pure, tree = self._mode(filename, text, ext, None)
        if pure:
            from .pure_python import PurePythonLoader

            loaded = PurePythonLoader(self).load(filename, text, tree)
        else:
            loaded = self.load_text_style(filename, text, ext, tree)
        self.raise_unknown()
        return loaded, pure

    def _mode(
        self, filename: str, text: str, ext: str, lazy_import: bool | None
    ) -> tuple[bool, ast.Module | None]:
        if ext != ".py" or lazy_import is False:
            return False, None
        from .python_source import may_be_pure

        if lazy_import is None and not may_be_pure(text):
            return False, None
        parsed = cached("mode", filename, text, lambda: _Parsed(filename, text))
        # The tree goes to whoever compiles the file first; later loads use what they cached.
        tree, parsed.tree = parsed.tree, None
        return (lazy_import or parsed.pure), tree

    def raise_unknown(self) -> None:
        if not self.unknown:
            return
        lines = [f"  {f}:{n or '?'}: {k}" for k, f, n in self.unknown]
        raise StrictModeError(
            "strict mode: these keys are set by a child config but defined by none of its "
            "bases (misspelt?):\n" + "\n".join(lines),
            list(self.unknown),
        )

    # -- text-style configs (.py with _base_ = ..., .json, .yaml) ----------------------------

    def load_text_style(self, filename: str, raw: str, ext: str, tree: Any = None) -> Loaded:
        from .substitution import BaseRefs, substitute_env, substitute_predefined

        env: dict[str, str] = {}
        text = raw
        if self.use_predefined_variables:
            text = substitute_predefined(text, filename)
        if self.use_environment_variables:
            text = substitute_env(text, filename, env)
        refs = BaseRefs(filename)
        text = refs.replace(text, quote_outside_strings=ext == ".json")
        if text != raw:
            tree = None
        if ext == ".py":
            parts = tree
            bases, codes, tree = cached(
                "text-py", filename, text, lambda: self._python_parts(filename, text, parts)
            )
            data = None
        else:
            data = self._data(filename, text, ext)
            bases = _data_bases(data.pop(BASE_KEY, None), filename, text)
        base_cfg, texts = self.load_bases(bases, filename, env)
        tokens = refs.resolve(base_cfg) if refs else {}
        if data is None:
            from .python_source import run

            namespace = {BASE_KEY: base_cfg, "__file__": filename, **tokens}
            for code in codes:
                run(code, namespace, filename)
            data = {
                k: v
                for k, v in namespace.items()
                if k != BASE_KEY and not k.startswith("__") and not isinstance(v, _DROPPED_TYPES)
            }
        if refs:
            refs.substitute(data)
        warn_deprecation(data, filename)
        lines = _KeyLines(filename, text, ext, tree)
        if self.strict and bases:
            self.unknown.extend(
                (dotted(path), filename, lines(path)) for path in unknown_keys(data, base_cfg)
            )
        merged = merge_a_into_b(data, base_cfg, locate=lines.locate, plain=True)
        cfg = {k: v for k, v in dict.items(merged) if not str(k).startswith("__")}
        texts.append(f"{filename}\n{raw}")
        return Loaded(cfg, "\n".join(texts), env, set())

    def _python_parts(
        self, filename: str, text: str, tree: Any
    ) -> tuple[Any, list[types.CodeType], ast.Module | None]:
        from .python_source import config_imports_to_treadle, parse, split_base

        if tree is None:
            from .python_pieces import compile_text_style

            compiled = compile_text_style(text, filename)
            if compiled is not None:  # most configs: no parse, statements compiled once
                return (*compiled, None)
            tree = parse(text, filename)
        # `from mmengine.config import read_base` left over from a commented-out
        # `with read_base():` must load without MMEngine installed, as it does with MMEngine.
        if "mmengine" in text:
            config_imports_to_treadle(tree)
        bases, _ = split_base(tree, filename)
        return bases, [compile(tree, filename, "exec", dont_inherit=True)], tree

    @staticmethod
    def _data(filename: str, text: str, ext: str) -> dict[str, Any]:
        """The values of a .json or .yaml text: parsed once per text, each load given its own
        copy, made by ``marshal`` from the parse's bytes (several times faster than parsing).
        A text whose values marshal cannot hold (a YAML date) is parsed on every load."""
        import marshal

        from .formats import load_json, load_yaml

        def parse() -> dict[str, Any]:
            return load_json(text, filename) if ext == ".json" else load_yaml(text, filename)

        def dump() -> bytes | None:
            try:
                return marshal.dumps(parse())
            except ValueError:
                return None

        blob = cached("data", filename, text, dump)
        if blob is None:
            return parse()
        data: dict[str, Any] = marshal.loads(blob)
        return data

    def load_bases(
        self, bases: list[tuple[str, int | None]] | None, filename: str, env: dict[str, Any]
    ) -> tuple[ConfigDict, list[str]]:
        values: dict[Any, Any] = {}
        texts: list[str] = []
        owners: dict[Any, str] = {}
        for path, line in bases or ():
            loaded = self.load_base(path, filename, line)
            texts.append(loaded.text)
            env.update(loaded.env_variables)
            duplicates = [k for k in loaded.cfg_dict if k in owners]
            if duplicates:
                first = owners[duplicates[0]]
                raise ConfigKeyError(
                    f"bases {first} and {loaded.file} both define "
                    f"{', '.join(repr(k) for k in duplicates)}: a key may come from one base only",
                    filename,
                    line,
                )
            scope = path.partition("::")[0] if is_package_path(path) else None
            for key in loaded.cfg_dict:
                owners[key] = loaded.file
            values.update(loaded.cfg_dict)
            if scope is not None:
                _add_scope(values, scope, list(loaded.cfg_dict))
        # A ConfigDict view of the bases' values (made for this load alone): what the child's
        # code reads of it is wrapped on the way, each path its own copy (config_dict.wrap).
        return wrap(values), texts

    def load_base(self, path: str, parent: str, line: int | None) -> Any:
        full = resolve(path, parent, line)
        ext = check_extension(full, (parent, line))
        cycle = closed_cycle(self.chain, full)
        if cycle:
            raise ConfigCycleError(f"_base_ files include each other: {cycle}", parent, line)
        text = read(full)
        pure, tree = self._mode(full, text, ext, self.base_lazy_import)
        if pure:
            raise ConfigParsingError(
                f"{full} is a pure-Python config (`with read_base():` or imports) but is used "
                "as a _base_ of a text-style config; the files of one inheritance chain must all "
                "be of one style",
                parent,
                line,
            )
        self.chain.append(full)
        try:
            loaded = self.load_text_style(full, text, ext, tree)
        finally:
            self.chain.pop()
        loaded.file = full
        return loaded


# Chains this deep are checked for cycles through symbolic links too.
_DEEP_CHAIN = 32


def closed_cycle(chain: list[str], path: str) -> str:
    """``'a -> b -> a'`` when loading ``path`` (absolute) from the end of ``chain`` closes a
    cycle, else ``''``. Paths are compared as written: resolving symbolic links costs a system
    call per folder on every load, so it waits until a chain is deep enough to hide a cycle
    through a link."""
    if path in chain:
        return " -> ".join([*chain[chain.index(path) :], path])
    if len(chain) >= _DEEP_CHAIN:
        real = [os.path.realpath(p) for p in chain]
        target = os.path.realpath(path)
        if target in real:
            return " -> ".join([*real[real.index(target) :], target])
    return ""


def _data_bases(value: Any, filename: str, text: str) -> list[tuple[str, int | None]] | None:
    if value is None:
        return None
    from .errors import ConfigTypeError

    paths = value if isinstance(value, list) else [value]
    found = []
    for path in paths:
        if not isinstance(path, str):
            raise ConfigTypeError(
                f"_base_ must be a path or a list of paths, got {path!r}",
                filename,
                _line_containing(text, BASE_KEY),
            )
        found.append((path, _line_containing(text, path) or _line_containing(text, BASE_KEY)))
    return found


def _line_containing(text: str, needle: str) -> int | None:
    at = text.find(needle)
    return None if at < 0 else text.count("\n", 0, at) + 1


def _add_scope(cfg: Any, scope: str, keys: list[Any], outer: bool = True) -> None:
    """MMEngine's rule for bases from 'pkg::' paths: the outermost dicts that have a ``type``
    get ``_scope_ = pkg`` unless they set one."""
    for key in keys:
        _scope_value(dict.__getitem__(cfg, key), scope)


def _scope_value(value: Any, scope: str) -> None:
    if isinstance(value, dict):
        if "type" in value:
            if dict.get(value, "_scope_") is None:
                dict.__setitem__(value, "_scope_", scope)
            return
        for item in dict.values(value):
            _scope_value(item, scope)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _scope_value(item, scope)


def unknown_keys(
    child: dict[str, Any], base: dict[str, Any], path: tuple[Any, ...] = ()
) -> list[tuple[Any, ...]]:
    """Key paths of ``child`` that ``base`` does not have (``_delete_`` dicts not entered)."""
    found = []
    for key, value in dict.items(child):
        if key == "_delete_":
            continue
        here = (*path, key)
        if key not in base:
            found.append(here)
            continue
        below = dict.__getitem__(base, key)
        if isinstance(value, dict) and isinstance(below, dict) and not value.get("_delete_"):
            found.extend(unknown_keys(value, below, here))
    return found


class _KeyLines:
    """Finds the line of a key path in one file, parsing for it only when asked (errors, strict
    mode), so loading pays nothing for it."""

    def __init__(self, filename: str, text: str, ext: str, tree: Any) -> None:
        self.filename, self.text, self.ext, self.tree = filename, text, ext, tree
        self._lines: dict[tuple[Any, ...], int] | None = None

    def __call__(self, path: tuple[Any, ...]) -> int | None:
        if self._lines is None:
            if self.ext == ".py":
                from .python_source import key_lines, parse

                tree = self.tree if self.tree is not None else parse(self.text, self.filename)
                self._lines = key_lines(tree)
            else:
                from .formats import key_lines as data_key_lines

                self._lines = data_key_lines(self.text)
        for end in range(len(path), 0, -1):
            key = tuple(str(p) if self.ext != ".py" else p for p in path[:end])
            if key in self._lines:
                return self._lines[key]
        return None

    def locate(self, path: tuple[Any, ...]) -> tuple[str, int | None]:
        return self.filename, self(path)
