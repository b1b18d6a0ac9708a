"""MMEngine's private loading steps, as ``Config`` static methods: toolboxes and their tests call
them directly (``Config._file2dict``, ``Config._substitute_env_variables``, ...).

treadle's loader does not go through them (it substitutes, parses and merges in one pass, in
memory, see ``loader.py``); each is a working method with MMEngine's signature and meaning, built
from the same helpers as the loader, so the two cannot disagree. The work is done in
``file_to_dict.py``, imported on first call: this module only adds names to ``Config``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from typing import Any

    from .config_dict import ConfigDict

    Path = str | os.PathLike[str]


class MMEngineSteps:
    """The private static methods of MMEngine's ``Config``; ``Config`` inherits them.

    Example:
        >>> from treadle.config import Config
        >>> Config._substitute_base_vars({'a': '_x_1'}, {'_x_1': 'x.y'}, {'x': {'y': 3}})
        {'a': 3}
    """

    @staticmethod
    def _file2dict(
        filename: Path,
        use_predefined_variables: bool = True,
        use_environment_variables: bool = True,
        lazy_import: bool | None = None,
    ) -> tuple[dict[str, Any], str, dict[str, Any]]:
        """A text-style config and its bases as ``(values, text, env_variables)``, as
        ``Config.fromfile`` holds them. See ``file_to_dict.file_to_dict``."""
        from .file_to_dict import file_to_dict

        return file_to_dict(
            filename, use_predefined_variables, use_environment_variables, lazy_import
        )

    @staticmethod
    def _get_cfg_path(cfg_path: str, filename: str) -> tuple[str, str | None]:
        """``(path, scope)`` of the ``_base_`` entry ``cfg_path`` of ``filename``: scope is the
        package of a ``'pkg::path'`` entry, else None."""
        from .file_to_dict import cfg_path_and_scope

        return cfg_path_and_scope(cfg_path, filename)

    @staticmethod
    def _validate_py_syntax(filename: Path) -> None:
        """Raise ``ConfigSyntaxError`` (a SyntaxError) naming the file and line where the
        Python file ``filename`` does not parse."""
        from .file_to_dict import validate_py_syntax

        validate_py_syntax(filename)

    @staticmethod
    def _substitute_predefined_vars(filename: Path, temp_config_name: Path) -> None:
        """Write the text of ``filename`` to ``temp_config_name`` with ``{{ fileDirname }}``,
        ``{{ fileBasename }}``, ``{{ fileBasenameNoExtension }}`` and ``{{ fileExtname }}``
        replaced by those of ``filename``."""
        from .file_to_dict import substitute_predefined_file

        substitute_predefined_file(filename, temp_config_name)

    @staticmethod
    def _substitute_env_variables(filename: Path, temp_config_name: Path) -> dict[str, str]:
        """Write the text of ``filename`` to ``temp_config_name`` with each
        ``{{$NAME:default}}`` replaced by the environment variable or the default; return the
        variables read from the environment. KeyError for an unset variable without default."""
        from .file_to_dict import substitute_env_file

        return substitute_env_file(filename, temp_config_name)

    @staticmethod
    def _pre_substitute_base_vars(filename: Path, temp_config_name: Path) -> dict[str, str]:
        """Write the text of ``filename`` to ``temp_config_name`` with each ``{{_base_.a.b}}``
        replaced by a quoted placeholder string; return ``{placeholder: 'a.b'}`` (the first
        half of MMEngine's base references, ``_substitute_base_vars`` is the second)."""
        from .file_to_dict import pre_substitute_base_vars

        return pre_substitute_base_vars(filename, temp_config_name)

    @staticmethod
    def _substitute_base_vars(
        cfg: Any, base_var_dict: dict[str, str], base_cfg: dict[str, Any]
    ) -> Any:
        """A copy of ``cfg`` in which every string that is a placeholder of ``base_var_dict``
        is replaced by the value of ``base_cfg`` at the placeholder's dotted key."""
        from .file_to_dict import substitute_base_vars

        return substitute_base_vars(cfg, base_var_dict, base_cfg)

    @staticmethod
    def _dict_to_config_dict(
        cfg: Any, scope: str | None = None, has_scope: bool = True
    ) -> ConfigDict | Any:
        """``cfg`` with every dict in it (inside lists and tuples too) made a ``ConfigDict``;
        with ``scope``, the outermost dicts that have a ``type`` get ``_scope_=scope`` unless
        they name one."""
        from .file_to_dict import dict_to_config_dict

        return dict_to_config_dict(cfg, scope, has_scope)
