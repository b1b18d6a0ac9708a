"""What a data element's class already defines, looked up once per class.

Fields live in the instance's ``__dict__`` next to the class's methods and properties, so a
field named like a method (``keys``, ``new``) would hide it. Properties are a different case:
downstream samples define ``gt_instances`` as a property that stores its value in the field
``_gt_instances``; that private twin is hidden from ``keys()``.
"""

from __future__ import annotations

import functools


@functools.cache
def property_names(cls: type) -> frozenset[str]:
    """Names that are properties on ``cls`` or one of its bases."""
    return frozenset(
        name
        for klass in cls.__mro__
        for name, value in vars(klass).items()
        if isinstance(value, property)
    )


@functools.cache
def method_names(cls: type) -> frozenset[str]:
    """Public callables of ``cls`` (methods, class and static methods) a field would hide."""
    names = set()
    for name in dir(cls):
        if name.startswith("__") or name in property_names(cls):
            continue
        if callable(getattr(cls, name, None)):
            names.add(name)
    return frozenset(names)
