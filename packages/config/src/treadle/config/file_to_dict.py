"""MMEngine's loading steps that toolboxes call on ``Config`` directly (``MMEngineSteps``):
``Config._file2dict`` (one text-style file with its bases, as a dict), ``Config._get_cfg_path``
(where a ``_base_`` entry points, and its package scope) and the text substitutions, which
MMEngine writes to a temporary file and treadle's loader does in memory."""

from __future__ import annotations

import os

from .loader import Loader, resolve
from .package_path import is_package_path, resolve_package_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def file_to_dict(
    filename: str | os.PathLike[str],
    use_predefined_variables: bool = True,
    use_environment_variables: bool = True,
    lazy_import: bool | None = None,
) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """Load a text-style config and its bases: ``(values, text, env_variables)``, as
    ``Config.fromfile`` would hold them, without building a Config (nor importing
    ``custom_imports``).

    A pure-Python config (``with read_base()``, imports) has no such dict: it raises
    RuntimeError unless ``lazy_import`` is given, which reads it as a text-style file.

    Example:
        >>> cfg_dict, text, env = file_to_dict('configs/model.py')  # doctest: +SKIP
    """
    path = resolve(os.fspath(filename))
    loader = Loader(use_predefined_variables, use_environment_variables)
    loaded, pure = loader.load(path, None if lazy_import is None else False)
    if pure:
        # MMEngine's phrase first: downstream tests match on it.
        raise RuntimeError(
            "The configuration file type in the inheritance chain must match the current "
            f"configuration file type, either lazy_import or not: {path} is a pure-Python "
            "config (read_base() or imports); load it with Config.fromfile"
        )
    from .config import Config

    # The values as Config holds them (dicts in them ConfigDicts), in a plain dict.
    values = Config._of_loaded(loaded, path)._cfg_dict
    return dict(values.items()), loaded.text, dict(loaded.env_variables)


def cfg_path_and_scope(cfg_path: str, filename: str) -> tuple[str, str | None]:
    """Where the ``_base_`` entry ``cfg_path`` of ``filename`` points, and its scope: the
    package of a ``'pkg::path'`` entry, None for a path relative to ``filename``'s folder
    (joined, not checked, as MMEngine does).

    Example:
        >>> cfg_path_and_scope('../base.py', '/cfgs/a/child.py')
        ('/cfgs/a/../base.py', None)
    """
    if is_package_path(cfg_path):
        return resolve_package_path(cfg_path, filename), cfg_path.partition("::")[0]
    return os.path.join(os.path.dirname(filename), cfg_path), None


def validate_py_syntax(filename: str | os.PathLike[str]) -> None:
    """Raise ``ConfigSyntaxError`` (a SyntaxError) at the line where the file is no valid
    Python.

    Example:
        >>> validate_py_syntax('configs/model.py')  # doctest: +SKIP
    """
    import ast

    from .errors import ConfigSyntaxError

    path = os.fspath(filename)
    try:
        ast.parse(_read(path), path)
    except SyntaxError as err:
        # MMEngine's phrase, then Python's reason; the location leads the message.
        raise ConfigSyntaxError(
            f"There are syntax errors in config file: {err.msg}",
            path,
            err.lineno,
            err.text,
            err.offset,
        ) from None


def substitute_predefined_file(
    filename: str | os.PathLike[str], temp_config_name: str | os.PathLike[str]
) -> None:
    """Write the text of ``filename`` to ``temp_config_name`` with its predefined variables
    (``{{ fileDirname }}``, ...) substituted as the loader does."""
    from .substitution import substitute_predefined

    path = os.fspath(filename)
    _write(temp_config_name, substitute_predefined(_read(path), path))


def substitute_env_file(
    filename: str | os.PathLike[str], temp_config_name: str | os.PathLike[str]
) -> dict[str, str]:
    """Write the text of ``filename`` to ``temp_config_name`` with its environment variables
    (``{{$NAME:default}}``) substituted as the loader does; return those read from the
    environment."""
    from .substitution import substitute_env

    path = os.fspath(filename)
    used: dict[str, str] = {}
    _write(temp_config_name, substitute_env(_read(path), path, used))
    return used


def pre_substitute_base_vars(
    filename: str | os.PathLike[str], temp_config_name: str | os.PathLike[str]
) -> dict[str, str]:
    """Write the text of ``filename`` to ``temp_config_name`` with each ``{{_base_.a.b}}``
    replaced by a quoted placeholder (``"_a.b_1f2e3d"``, one per key); return
    ``{placeholder: 'a.b'}``. ``substitute_base_vars`` puts the base values in their place once
    the text is loaded (MMEngine's two steps; the loader keeps its own tokens)."""
    import re

    from .substitution import _BASE_REF

    placeholders: dict[str, str] = {}  # dotted key -> placeholder

    def replace(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in placeholders:
            placeholders[key] = f"_{key}_{os.urandom(3).hex()}"
        return f'"{placeholders[key]}"'

    _write(temp_config_name, _BASE_REF.sub(replace, _read(os.fspath(filename))))
    return {placeholder: key for key, placeholder in placeholders.items()}


def substitute_base_vars(cfg: Any, base_var_dict: dict[str, str], base_cfg: Any) -> Any:
    """A deep copy of ``cfg`` in which each string that is a placeholder of ``base_var_dict``
    (see ``pre_substitute_base_vars``) is the value of ``base_cfg`` at its dotted key (digits
    index lists).

    Example:
        >>> substitute_base_vars({'a': ['_x.0_9a']}, {'_x.0_9a': 'x.0'}, {'x': [5, 6]})
        {'a': [5]}
    """
    import copy

    from .errors import ConfigKeyError

    def lookup(placeholder: str) -> Any:
        value = base_cfg
        for part in base_var_dict[placeholder].split("."):
            try:
                if isinstance(value, (list, tuple)) and part.isdigit():
                    value = value[int(part)]
                else:
                    value = value[part]
            except (KeyError, IndexError, TypeError):
                raise ConfigKeyError(
                    f"{{{{_base_.{base_var_dict[placeholder]}}}}}: the base config has no "
                    f"{part!r} there"
                ) from None
        return value

    def replace(value: Any) -> Any:
        if isinstance(value, str):
            return lookup(value) if value in base_var_dict else value
        if isinstance(value, dict):
            for key, item in list(dict.items(value)):
                value[key] = replace(item)
            return value
        if isinstance(value, list):
            return [replace(item) for item in value]
        if isinstance(value, tuple):
            return tuple(replace(item) for item in value)
        return value

    return replace(copy.deepcopy(cfg))


def dict_to_config_dict(cfg: Any, scope: str | None = None, has_scope: bool = True) -> Any:
    """``cfg`` with each dict in it (inside lists and tuples too) made a ``ConfigDict``. With
    ``scope``, the outermost dicts that have a ``type`` (those not inside another such dict,
    while ``has_scope``) get ``_scope_=scope`` unless they name one: MMEngine marks the values
    of a ``'pkg::path'`` base this way, so their types are built in the package's registry.

    Example:
        >>> dict_to_config_dict({'m': {'type': 'A', 'b': {'type': 'B'}}}, 'mmdet')
        {'m': {'type': 'A', 'b': {'type': 'B'}, '_scope_': 'mmdet'}}
    """
    from .config_dict import ConfigDict

    if isinstance(cfg, dict):
        add_scope = False
        if has_scope and "type" in cfg:
            has_scope = False
            add_scope = scope is not None and cfg.get("_scope_") is None
        converted = ConfigDict()
        for key, value in dict.items(cfg):
            dict.__setitem__(converted, key, dict_to_config_dict(value, scope, has_scope))
        if add_scope:
            dict.__setitem__(converted, "_scope_", scope)
        return converted
    if isinstance(cfg, list):
        return [dict_to_config_dict(item, scope, has_scope) for item in cfg]
    if isinstance(cfg, tuple):
        return tuple(dict_to_config_dict(item, scope, has_scope) for item in cfg)
    return cfg


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read()


def _write(path: str | os.PathLike[str], text: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
