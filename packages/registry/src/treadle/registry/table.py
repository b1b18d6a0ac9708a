"""A registry's contents as a plain-text table, for ``repr`` in a terminal or a log."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .registry import Registry

HEADER = ("Name", "Object", "Module")


def _describe(obj: Any) -> tuple[str, str]:
    """(what the object is, the module it comes from) for one row."""
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        # A functools.partial or a callable instance: its repr says more than its type.
        func = getattr(obj, "func", None)
        name = repr(obj) if func is None else f"partial({getattr(func, '__qualname__', func)})"
    kind = "class" if isinstance(obj, type) else "function"
    module = str(getattr(obj, "__module__", None) or getattr(type(obj), "__module__", "?"))
    return f"{kind} {name}", module


def registry_table(registry: Registry) -> str:
    """The registered names of ``registry``, sorted, with what each is and where it comes from.

    Example:
        >>> print(registry_table(MODELS))  # doctest: +SKIP
        Registry of models (scope 'mydet'): 2 modules
        Name     Object         Module
        -------  -------------  ------------------
        ResNet   class ResNet   mydet.models.resnet
        resnet5  function ...   mydet.models.resnet
    """
    rows = [(name, *_describe(obj)) for name, obj in sorted(registry.module_dict.items())]
    count = len(rows)
    # "Registry of NAME" begins the title, as MMEngine's table does.
    title = (
        f"Registry of {registry.name} (scope {registry.scope!r}): "
        f"{count} module{'' if count == 1 else 's'}"
    )
    if not rows:
        return title
    widths = [max(len(row[column]) for row in (HEADER, *rows)) for column in range(3)]
    lines = [title]
    for row in (HEADER, tuple("-" * width for width in widths), *rows):
        lines.append(
            "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        )
    return "\n".join(lines)
