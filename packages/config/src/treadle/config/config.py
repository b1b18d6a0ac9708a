"""``Config``: a config file (or dict) loaded, merged, overridden and written back."""

from __future__ import annotations

import os

from .config_dict import ConfigDict, to_plain
from .errors import ConfigImportError, ConfigTypeError
from .loaded_values import RESERVED_KEYS as RESERVED_KEYS  # re-exported: it was defined here
from .loaded_values import LoadedValues, check_keys
from .mmengine_steps import MMEngineSteps

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterator
    from pathlib import Path
    from typing import Any


class Config(LoadedValues, MMEngineSteps):
    """A config: attribute and item access to its values, plus where it came from.

    Args:
        cfg_dict: the values. Nested dicts become ``ConfigDict``.
        cfg_text: the config's text (read from ``filename`` when not given).
        filename: the file it came from.
        env_variables: environment variables the config read.
        format_python_code: accepted for MMEngine compatibility; the Python dump is always
            formatted by treadle's own formatter.

    MMEngine's private loading steps, which toolboxes call (``Config._file2dict``,
    ``Config._substitute_env_variables``, ...), are inherited from ``MMEngineSteps``; a loaded
    config's values are made into ``ConfigDict`` when first needed (``LoadedValues``).

    Example:
        >>> cfg = Config(dict(model=dict(type='Net', depth=18)))
        >>> cfg.model.depth
        18
        >>> cfg.merge_from_dict({'model.depth': 50})
        >>> cfg.model.depth
        50
        >>> print(cfg.pretty_text, end='')
        model = dict(depth=50, type='Net')
    """

    def __init__(
        self,
        cfg_dict: dict[str, Any] | None = None,
        cfg_text: str | None = None,
        filename: str | Path | None = None,
        env_variables: dict[str, Any] | None = None,
        format_python_code: bool = True,
    ) -> None:
        filename = os.fspath(filename) if filename is not None else None
        if cfg_dict is None:
            cfg_dict = {}
        elif not isinstance(cfg_dict, dict):
            raise ConfigTypeError(f"cfg_dict must be a dict, but got {type(cfg_dict).__name__}")
        check_keys(cfg_dict, filename)
        if not isinstance(cfg_dict, ConfigDict):
            cfg_dict = ConfigDict(cfg_dict)
        self._set("_cfg_dict", cfg_dict)
        self._set_source(filename, cfg_text, env_variables, format_python_code)

    def _set_source(
        self,
        filename: str | None,
        cfg_text: str | None,
        env_variables: dict[str, Any] | None,
        format_python_code: bool,
    ) -> None:
        if cfg_text:
            text = cfg_text
        elif filename and os.path.isfile(filename):
            with open(filename, encoding="utf-8") as f:
                text = f.read()
        else:
            text = ""
        self._set("_filename", filename)
        self._set("_text", text)
        self._set("_env_variables", dict(env_variables or {}))
        self._set("_format_python_code", format_python_code)
        self._set("_imported_names", set())

    # Set through _set (setting an attribute sets a config key); declared for the checker.
    _cfg_dict: ConfigDict
    _filename: str | None
    _text: str
    _env_variables: dict[str, Any]
    _imported_names: set[Any]

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    # -- loading -----------------------------------------------------------------------------

    @staticmethod
    def fromfile(
        filename: str | Path,
        use_predefined_variables: bool = True,
        import_custom_modules: bool = True,
        use_environment_variables: bool = True,
        lazy_import: bool | None = None,
        format_python_code: bool = True,
        *,
        strict: bool = False,
    ) -> Config:
        """Load a .py, .json, .yaml or .yml config with its ``_base_`` files.

        ``filename`` may be ``'pkg::path/to/cfg.py'``: a config inside an installed package.
        ``lazy_import`` None tells pure-Python configs (``with read_base()``, imports) from
        text-style ones by their content. With ``strict=True``, keys that a child config sets but
        none of its bases define raise ``StrictModeError`` naming each file and line.
        """
        from .loader import Loader, resolve

        loader = Loader(use_predefined_variables, use_environment_variables, strict)
        path = resolve(os.fspath(filename))
        loaded, pure = loader.load(path, lazy_import)
        if pure:
            # The text just loaded, not the file read again.
            cfg = Config._of_loaded(loaded, path, format_python_code)
            cfg._set("_imported_names", loaded.imported_names)
            return cfg
        cfg = Config._from_loaded(loaded, path, import_custom_modules)
        cfg._set("_format_python_code", format_python_code)
        return cfg

    @staticmethod
    def fromstring(cfg_str: str, file_format: str, *, strict: bool = False) -> Config:
        """Load config text of a format (``'.py'``, ``'.json'``, ``'.yaml'``, ``'.yml'``).

        ``_base_`` paths are relative to the working directory.
        """
        import warnings

        from .loader import Loader

        if file_format in ("py", "json", "yaml", "yml"):
            file_format = "." + file_format
        if file_format != ".py" and "dict(" in cfg_str:
            warnings.warn(
                f"file_format is {file_format!r} but the text looks like Python (dict(...))",
                UserWarning,
                stacklevel=2,
            )
        loaded, pure = Loader(strict=strict).load_string(cfg_str, file_format)
        if pure:
            cfg = Config._of_loaded(loaded, None)
            cfg._set("_text", cfg_str)
            cfg._set("_imported_names", loaded.imported_names)
            return cfg
        cfg = Config._from_loaded(loaded, None, True)
        cfg._set("_text", cfg_str)
        return cfg

    @staticmethod
    def _from_loaded(loaded: Any, filename: str | None, import_custom_modules: bool) -> Config:
        custom = loaded.cfg_dict.get("custom_imports")
        if import_custom_modules and custom:
            from .custom_imports import import_modules_from_strings

            if not isinstance(custom, dict):
                raise ConfigTypeError(
                    "custom_imports must be dict(imports=[...], allow_failed_imports=False), "
                    f"got {custom!r}",
                    filename,
                )
            try:
                import_modules_from_strings(**custom)
            except ImportError as err:
                import sys

                # MMEngine's phrase first (code matches on it), then where Python looked.
                raise ConfigImportError(
                    f"Failed to import custom modules from {custom!r}: {err}; sys.path is "
                    f"{sys.path}",
                    filename,
                ) from err
        return Config._of_loaded(loaded, filename, env_variables=loaded.env_variables)

    # -- access ------------------------------------------------------------------------------

    @property
    def filename(self) -> str | None:
        """The config file's path (None for configs made from a dict or a string)."""
        return self._filename

    @property
    def text(self) -> str:
        """The text of the config file and of its bases, each after its path."""
        return self._text

    @property
    def env_variables(self) -> dict[str, Any]:
        """Environment variables the config read through ``{{$NAME:default}}``."""
        return self._env_variables

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        if name == "_cfg_dict":
            return self._materialize()
        return getattr(self._cfg_dict, name)

    def __getitem__(self, name: Any) -> Any:
        return self._cfg_dict[name]

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, dict):
            value = ConfigDict(value)
        setattr(self._cfg_dict, name, value)

    def __setitem__(self, name: Any, value: Any) -> None:
        if isinstance(value, dict):
            value = ConfigDict(value)
        self._cfg_dict[name] = value

    def __delattr__(self, name: str) -> None:
        delattr(self._cfg_dict, name)

    def __delitem__(self, name: Any) -> None:
        del self._cfg_dict[name]

    def __contains__(self, name: Any) -> bool:
        return name in self._cfg_dict

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cfg_dict)

    def __len__(self) -> int:
        return len(self._cfg_dict)

    def __repr__(self) -> str:
        return f"Config (path: {self.filename}): {self._cfg_dict!r}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Config):
            return self.to_dict() == other.to_dict()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    # -- copies and pickling -----------------------------------------------------------------

    def __getstate__(self) -> tuple[Any, ...]:
        return (
            self._cfg_dict,
            self._filename,
            self._text,
            self._env_variables,
            self._format_python_code,
            self._imported_names,
        )

    def __setstate__(self, state: tuple[Any, ...]) -> None:
        names = ("_cfg_dict", "_filename", "_text", "_env_variables", "_format_python_code")
        for name, value in zip(names, state[:5], strict=True):
            self._set(name, value)
        self._set("_imported_names", state[5] if len(state) > 5 else set())

    def __copy__(self) -> Config:
        self._cfg_dict  # noqa: B018 (made before its state is shared)
        other = Config.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other._set("_cfg_dict", self._cfg_dict.copy())
        return other

    copy = __copy__

    def __deepcopy__(self, memo: dict[int, Any]) -> Config:
        import copy

        self._cfg_dict  # noqa: B018 (made before its state is copied)
        other = Config.__new__(type(self))
        memo[id(self)] = other
        for key, value in self.__dict__.items():
            other._set(key, copy.deepcopy(value, memo))
        return other

    # -- conversion --------------------------------------------------------------------------

    def to_dict(self, keep_imported: bool = False) -> dict[str, Any]:
        """Plain dicts all the way down; lazily imported objects as dotted strings. Names a
        pure-Python config imported are left out unless ``keep_imported``."""
        values, known = self._values()
        plain: dict[str, Any] = to_plain(self._visible(values, keep_imported), True, known)
        return plain

    def _to_lazy_dict(self, keep_imported: bool = False) -> dict[str, Any]:
        values, known = self._values()
        plain: dict[str, Any] = to_plain(self._visible(values, keep_imported), False, known)
        return plain

    def _visible(self, cfg: dict[str, Any], keep_imported: bool) -> dict[str, Any]:
        if keep_imported or not self._imported_names:
            return cfg
        return {k: v for k, v in dict.items(cfg) if k not in self._imported_names}

    @property
    def pretty_text(self) -> str:
        """The config as formatted Python source that loads back to the same dict."""
        from .formatting import format_python

        return format_python(self._to_lazy_dict())

    def dump(self, file: str | Path | None = None) -> str | None:
        """Write the config to ``file`` (.py, .json, .yaml or .yml, chosen by its extension);
        without ``file``, return the text in the format of the config's own file."""
        from .formats import dump_json, dump_yaml

        if file is None:
            # Not splitext(".py"): that is a hidden file's name with no extension.
            ext = os.path.splitext(self.filename)[1] if self.filename else ".py"
        else:
            file = os.fspath(file)
            ext = os.path.splitext(file)[1]
        if ext == ".py":
            text = self.pretty_text
        elif ext == ".json":
            text = dump_json(self.to_dict())
        elif ext in (".yaml", ".yml"):
            text = dump_yaml(self.to_dict())
        else:
            from .errors import ConfigFormatError

            raise ConfigFormatError(
                f"cannot dump a config as {ext!r}: use .py, .json, .yaml or .yml", file
            )
        if file is None:
            return text
        _write_atomically(file, text)
        return None

    # -- changes -----------------------------------------------------------------------------

    def merge_from_dict(self, options: dict[str, Any], allow_list_keys: bool = True) -> None:
        """Merge ``{'dotted.key': value}`` into the config.

        Digits index lists when ``allow_list_keys`` (``'pipeline.0.type'``); a dict value with
        ``_delete_=True`` replaces instead of merging.
        """
        from .merge import merge_a_into_b

        nested: dict[str, Any] = {}
        for full_key, value in options.items():
            node = nested
            parts = str(full_key).split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = value

        def where(path: tuple[Any, ...]) -> tuple[str, None]:
            return "merge_from_dict", None

        merged = merge_a_into_b(nested, self._cfg_dict, allow_list_keys, where)
        self._set("_cfg_dict", ConfigDict(merged) if not isinstance(merged, ConfigDict) else merged)

    @staticmethod
    def diff(cfg1: str | Config, cfg2: str | Config) -> str:
        """A unified diff of the ``pretty_text`` of two configs (or config files), in MMEngine's
        text: no file names in the header, every line followed by an empty one except the
        changed and context lines, and a last newline (so two equal configs give ``'\\n'``).
        ``unified_diff`` gives the ordinary form, with the file names."""
        import difflib

        lines = difflib.unified_diff(
            _as_config(cfg1).pretty_text.split("\n"), _as_config(cfg2).pretty_text.split("\n")
        )
        # difflib ends its header lines with a newline and the text lines without one; MMEngine
        # adds one to each line and prints the whole with another.
        return "".join(line + "\n" for line in lines) + "\n"

    @staticmethod
    def auto_argparser(description: str | None = None) -> tuple[argparse.ArgumentParser, Config]:
        """An ``ArgumentParser`` with one option per config key of the config on the command
        line (MMEngine's experimental helper); returns ``(parser, cfg)``."""
        import argparse

        partial = argparse.ArgumentParser(description=description)
        partial.add_argument("config", help="config file path")
        cfg = Config.fromfile(partial.parse_known_args()[0].config)
        parser = argparse.ArgumentParser(description=description)
        parser.add_argument("config", help="config file path")
        _add_args(parser, cfg.to_dict())
        return parser, cfg


def _as_config(cfg: str | Config) -> Config:
    return cfg if isinstance(cfg, Config) else Config.fromfile(cfg)


def unified_diff(cfg1: str | Config, cfg2: str | Config) -> str:
    """A unified diff of the ``pretty_text`` of two configs (or config files), with their file
    names in the header; ``''`` when they are the same.

    Example:
        >>> print(unified_diff(Config(dict(a=1)), Config(dict(a=2))))
        --- cfg1
        +++ cfg2
        @@ -1 +1 @@
        -a = 1
        +a = 2
    """
    import difflib

    first, second = _as_config(cfg1), _as_config(cfg2)
    lines = difflib.unified_diff(
        first.pretty_text.splitlines(),
        second.pretty_text.splitlines(),
        fromfile=str(first.filename or "cfg1"),
        tofile=str(second.filename or "cfg2"),
        lineterm="",
    )
    return "\n".join(lines)


def _add_args(parser: Any, cfg: dict[str, Any], prefix: str = "") -> None:
    for key, value in cfg.items():
        option = f"--{prefix}{key}"
        if isinstance(value, dict):
            _add_args(parser, value, f"{prefix}{key}.")
        elif isinstance(value, bool):
            parser.add_argument(option, action="store_true")
        elif isinstance(value, (int, float, str)):
            parser.add_argument(option, type=type(value))
        elif isinstance(value, (list, tuple)) and value:
            parser.add_argument(option, type=type(value[0]), nargs="+")


def _write_atomically(path: str, text: str) -> None:
    folder, name = os.path.split(os.path.abspath(path))
    temp = os.path.join(folder, f".tmp-{os.urandom(6).hex()}-{name}")
    # Mode 0o666 minus the umask, as a plain open(path, 'w') gives (mkstemp would give 0o600).
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.unlink(temp)
        raise
