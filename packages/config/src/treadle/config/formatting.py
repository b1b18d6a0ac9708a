"""Writing a config dict as readable Python that loads back to the same dict.

Top-level keys become assignments, sorted like MMEngine's ``pretty_text`` so that diffs of two
configs line up. A dict is written ``dict(a=1)`` when its keys are identifiers, ``{'a-b': 1}``
otherwise; a value that fits in 100 columns stays on one line, a dict holding dicts goes one key
per line, long lists and tuples wrap. Lazily imported objects (and classes or functions) are
written as names with the imports they need at the top.
"""

from __future__ import annotations

import keyword
import math

from .lazy import LazyAttr, LazyObject

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

WIDTH = 100
INDENT = "    "


def _is_name(key: Any) -> bool:
    return isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key)


def _sorted_items(d: dict[str, Any]) -> list[Any]:
    return sorted(dict.items(d), key=lambda kv: str(kv[0]))


class _Imports:
    """The names that lazy objects, classes and functions are written as, and their imports."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)
        self.by_path: dict[str, str] = {}
        self.lines: list[str] = []

    def name_for(self, module: str, attr: str) -> str:
        path = f"{module}.{attr}"
        if path in self.by_path:
            return self.by_path[path]
        name = attr
        if name in self.taken or not _is_name(name):
            name = "_".join([*module.split("."), attr]).replace("-", "_")
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        self.by_path[path] = name
        alias = "" if name == attr else f" as {name}"
        self.lines.append(f"from {module} import {attr}{alias}")
        return name


def _import_target(value: Any) -> tuple[str, str] | None:
    if isinstance(value, (LazyObject, LazyAttr)):
        module, _, attr = value.dotted.rpartition(".")
        return (module, attr) if module else None
    if not (isinstance(value, type) or callable(value)):
        return None
    module_name = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if not (isinstance(module_name, str) and isinstance(qualname, str)):
        return None
    if module_name and qualname and "<" not in qualname and "." not in qualname:
        return module_name, qualname
    return None


class PythonFormatter:
    def __init__(self, cfg_dict: dict[str, Any]) -> None:
        self.cfg_dict = cfg_dict
        self.imports = _Imports({str(k) for k in cfg_dict})

    def format(self) -> str:
        assigns: list[str] = []
        odd: list[str] = []
        for key, value in _sorted_items(self.cfg_dict):
            if _is_name(key):
                assigns.append(self._assign(f"{key} = ", value))
            else:
                odd.append(f"{INDENT}{key!r}: {self.value(value, 1)},")
        if odd:
            # Keys that are not identifiers cannot be assigned as names; the namespace takes them.
            assigns.append("globals().update({\n" + "\n".join(odd) + "\n})")
        header = "\n".join(self.imports.lines)
        body = "\n".join(assigns)
        return f"{header}\n\n{body}\n" if header else f"{body}\n"

    def _assign(self, prefix: str, value: Any) -> str:
        return prefix + self.value(value, 0, len(prefix))

    def value(self, value: Any, depth: int, used: int = 0) -> str:
        """``value`` as Python source; continuation lines are indented for ``depth``."""
        if isinstance(value, dict):
            return self._dict(value, depth, used)
        if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
            return self._sequence(value, depth, used)
        return self._scalar(value)

    def _scalar(self, value: Any) -> str:
        if isinstance(value, float) and not math.isfinite(value):
            return f"float('{value}')"
        if isinstance(value, (str, bytes, int, float, complex, bool)) or value is None:
            return repr(value)
        target = _import_target(value)
        if target is not None:
            return self.imports.name_for(*target)
        return repr(value)

    def _dict(self, d: dict[str, Any], depth: int, used: int) -> str:
        if not d:
            return "dict()"
        named = all(_is_name(k) for k in d)
        items = [(f"{k}=" if named else f"{self._scalar(k)}: ", v) for k, v in _sorted_items(d)]
        open_, close = ("dict(", ")") if named else ("{", "}")
        nested = any(isinstance(v, dict) and v for v in d.values())
        if not nested:
            flat = open_ + ", ".join(p + self.value(v, depth + 1) for p, v in items) + close
            if "\n" not in flat and len(INDENT) * depth + used + len(flat) <= WIDTH:
                return flat
        inner = INDENT * (depth + 1)
        lines = [f"{inner}{p}{self.value(v, depth + 1, len(p))}," for p, v in items]
        return open_ + "\n" + "\n".join(lines) + "\n" + INDENT * depth + close

    def _sequence(self, seq: list[Any] | tuple[Any, ...], depth: int, used: int) -> str:
        open_, close = ("[", "]") if isinstance(seq, list) else ("(", ")")
        if not seq:
            return open_ + close
        parts = [self.value(v, depth + 1) for v in seq]
        trailing = "," if isinstance(seq, tuple) and len(seq) == 1 else ""
        flat = open_ + ", ".join(parts) + trailing + close
        if "\n" not in flat and len(INDENT) * depth + used + len(flat) <= WIDTH:
            return flat
        inner = INDENT * (depth + 1)
        if any("\n" in p for p in parts) or any(isinstance(v, dict) for v in seq):
            parts = [self.value(v, depth + 1) for v in seq]
            body = "\n".join(f"{inner}{p}," for p in parts)
            return open_ + "\n" + body + "\n" + INDENT * depth + close
        # Short items: as many per line as fit in the width.
        lines, line = [], ""
        for part in parts:
            piece = part + ","
            if line and len(inner) + len(line) + 1 + len(piece) > WIDTH:
                lines.append(line)
                line = piece
            else:
                line = f"{line} {piece}" if line else piece
        lines.append(line)
        return open_ + "\n" + "\n".join(inner + ln for ln in lines) + "\n" + INDENT * depth + close


def format_python(cfg_dict: dict[str, Any]) -> str:
    """Python source for ``cfg_dict`` (lazy objects kept, not turned into strings)."""
    return PythonFormatter(cfg_dict).format()
