"""MMEngine's two loading steps that toolboxes call on ``Config`` directly:
``Config._file2dict`` (one text-style file with its bases, as a dict) and
``Config._get_cfg_path`` (where a ``_base_`` entry points, and its package scope)."""

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
    return dict(loaded.cfg_dict), loaded.text, dict(loaded.env_variables)


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
