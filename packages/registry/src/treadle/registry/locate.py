"""Find an object by its full dotted path, such as ``'collections.OrderedDict'``.

Configs dumped from lazy-import configs name types by import path instead of registered name
(``type='treadle.runner.model.BaseModel'``); a registry falls back to this when no registered
name matches.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def locate_object(path: str) -> Any | None:
    """Return the object ``path`` names, or None when no module of the path exists or it has
    no such attribute. A module that exists but fails to import raises its error."""
    parts = path.split(".")
    if not all(parts):
        return None
    module = None
    imported = 0
    # The longest importable module prefix: 'a.b.C' imports 'a', then 'a.b', then finds C.
    for index in range(1, len(parts) + 1):
        name = ".".join(parts[:index])
        existing = sys.modules.get(name)
        if existing is not None:
            module, imported = existing, index
            continue
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise  # the module exists; something it imports does not
            break
        imported = index
    if module is None or imported == len(parts):
        return None  # nothing importable, or the path names a module: no type to build
    obj: Any = module
    for attribute in parts[imported:]:
        obj = getattr(obj, attribute, None)
        if obj is None:
            return None
    return obj
