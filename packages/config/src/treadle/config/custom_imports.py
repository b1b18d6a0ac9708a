"""``custom_imports``: modules a config asks to import (to register their classes)."""

from __future__ import annotations

import importlib
import warnings

from .errors import ConfigImportError, ConfigTypeError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def import_modules_from_strings(
    imports: str | list[str] | None, allow_failed_imports: bool = False
) -> ModuleType | list[ModuleType | None] | None:
    """Import modules named by strings.

    Args:
        imports: a module name or a list of them.
        allow_failed_imports: warn and give None for a module that fails to import, instead of
            raising ``ImportError``.

    Example:
        >>> os_path, json = import_modules_from_strings(['os.path', 'json'])
        >>> os_path.__name__, json.__name__
        ('posixpath', 'json')
    """
    if not imports:
        return None
    single = isinstance(imports, str)
    names = [imports] if single else imports
    if not isinstance(names, list):
        raise ConfigTypeError(f"custom_imports must be a str or a list of str, got {imports!r}")
    modules: list[ModuleType | None] = []
    for name in names:
        if not isinstance(name, str):
            raise ConfigTypeError(f"custom_imports must hold module names, got {name!r}")
        try:
            modules.append(importlib.import_module(name))
        except ImportError as err:
            if not allow_failed_imports:
                raise ConfigImportError(
                    f"custom_imports: cannot import {name!r}: {err}. Is the folder holding it on "
                    "sys.path (PYTHONPATH)?"
                ) from err
            warnings.warn(
                f"custom_imports: {name} failed to import and is ignored", UserWarning, stacklevel=2
            )
            modules.append(None)
    return modules[0] if single else modules
