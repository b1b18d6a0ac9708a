"""Find an object by its full dotted path, such as ``'collections.OrderedDict'``.

Configs dumped from lazy-import configs name types by import path instead of registered name
(``type='treadle.runner.model.BaseModel'``); a registry falls back to this when no registered
name matches.
"""

from __future__ import annotations

import importlib
from types import ModuleType

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _import(name: str) -> ModuleType | None:
    """The module ``name``, or None when there is no such module. A module that exists but
    fails to import (a dependency missing, an error while it runs) raises."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise  # the module exists; something it imports does not
        return None


def locate_object(path: str, modules: bool = False) -> Any | None:
    """Return the object ``path`` names, or None when there is none, or it is a module and
    ``modules`` is false. Each part is what Python's ``import a.b`` then ``a.b.C`` would give: a
    package's attribute wins over its submodule of the same name (``pkg.nms``, the function
    ``pkg/__init__.py`` imports from ``pkg/nms.py``).

    Example:
        >>> locate_object('collections.OrderedDict').__name__
        'OrderedDict'
        >>> locate_object('os.path') is None, locate_object('os.path', modules=True).__name__
        (True, 'posixpath')
    """
    parts = path.split(".")
    if not all(parts):
        return None
    obj: Any = _import(parts[0])
    for index in range(1, len(parts)):
        if obj is None:
            return None
        attribute = getattr(obj, parts[index], None)
        if isinstance(obj, ModuleType) and (attribute is None or isinstance(attribute, ModuleType)):
            # A submodule not imported yet, or one reached through its parent (an alias such
            # as `import numpy as np` in the package is kept when no submodule has the name).
            attribute = _import(f"{obj.__name__}.{parts[index]}") or attribute
        obj = attribute
    if obj is None or (isinstance(obj, ModuleType) and not modules):
        return None
    return obj
