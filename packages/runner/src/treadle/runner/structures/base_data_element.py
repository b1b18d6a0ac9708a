"""BaseDataElement: the container that carries data and its meta information between the
dataset, the model and the evaluator.

A field is either metainfo (about the sample: image size, file name; deep-copied when set) or
data (tensors, arrays, nested elements: shared, and what ``to``/``cpu``/``numpy`` convert).
Values live as plain attributes, so reading ``sample.bboxes`` costs what any attribute does;
the two ordered name tables (plain dicts of names, ``_metainfo_names`` and ``_data_names``) say
which kind each field is; ``_metainfo_fields`` and ``_data_fields`` are set views of them, as
MMEngine's sets (see field_names.py).
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import torch

from .class_attributes import method_names, property_names
from .element_repr import element_repr
from .errors import DataElementTypeError, DataElementValueError
from .field_names import IMMUTABLE, FieldTable

# The two name tables and their set views; they are the element's own bookkeeping, never
# fields. A frozenset: every setattr looks a name up here (as fast as a 2-tuple scan).
_TABLES = frozenset(("_metainfo_fields", "_data_fields", "_metainfo_names", "_data_names"))
_OLD_TABLES = (("_metainfo_fields", "_metainfo_names"), ("_data_fields", "_data_names"))
_FIELD_TYPES = ("metainfo", "data")
_IMMUTABLE = IMMUTABLE


def _type_name(dtype: type | tuple[type, ...]) -> str:
    if isinstance(dtype, tuple):
        return " or ".join(kind.__name__ for kind in dtype)
    return dtype.__name__


class BaseDataElement:
    """Data fields and metainfo fields of one sample, set and read as attributes.

    Metainfo is given as ``metainfo=`` (a dict), data as keyword arguments. A name is either
    metainfo or data, never both. ``keys()``/``values()``/``items()`` give data fields in the
    order they were set, ``metainfo_*`` the metainfo, ``all_*`` both (metainfo first).

    Example:
        >>> import torch
        >>> sample = BaseDataElement(metainfo=dict(img_shape=(800, 1216)),
        ...                          bboxes=torch.zeros(2, 4))
        >>> sample.scores = torch.ones(2)
        >>> sample.keys(), sample.metainfo_keys()
        (['bboxes', 'scores'], ['img_shape'])
        >>> sample.set_metainfo(dict(img_id=3))
        >>> sample.metainfo
        {'img_shape': (800, 1216), 'img_id': 3}
        >>> sample.numpy().bboxes.shape
        (2, 4)
    """

    # MMEngine's name tables, as sets: views of the dicts below (see field_names.py).
    _metainfo_fields = FieldTable("_metainfo_names")
    _data_fields = FieldTable("_data_names")

    def __init__(self, *, metainfo: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        # Dicts keep insertion order; their values are unused (an ordered set of names).
        object.__setattr__(self, "_metainfo_names", {})
        object.__setattr__(self, "_data_names", {})
        if metainfo is not None:
            self.set_metainfo(metainfo)
        if kwargs:
            self.set_data(kwargs)

    # ---- setting fields -----------------------------------------------------------------

    def set_metainfo(self, metainfo: Mapping[str, Any]) -> None:
        """Add or replace metainfo fields; the values are deep-copied."""
        if not isinstance(metainfo, Mapping):
            raise DataElementTypeError(
                f"{type(self).__name__}: metainfo should be a ``dict`` but got "
                f"{type(metainfo).__name__}: {metainfo!r}"
            )
        for name, value in copy.deepcopy(dict(metainfo)).items():
            self.set_field(value, name, field_type="metainfo")

    def set_data(self, data: Mapping[str, Any]) -> None:
        """Add or replace data fields, as ``setattr`` does for each item."""
        if not isinstance(data, Mapping):
            raise DataElementTypeError(
                f"{type(self).__name__}: data should be a `dict` but got "
                f"{type(data).__name__}: {data!r}"
            )
        for name, value in data.items():
            setattr(self, name, value)

    def update(self, instance: BaseDataElement) -> None:
        """Copy the metainfo and data fields of ``instance`` into this element."""
        if not isinstance(instance, BaseDataElement):
            raise DataElementTypeError(
                f"{type(self).__name__}.update: instance should be a `BaseDataElement` but got "
                f"{type(instance).__name__}: {instance!r}"
            )
        self.set_metainfo(dict(instance.metainfo_items()))
        self.set_data(dict(instance.items()))

    def set_field(
        self,
        value: Any,
        name: str,
        dtype: type | tuple[type, ...] | None = None,
        field_type: str = "data",
    ) -> None:
        """Set ``name`` as a metainfo or data field, checking ``value`` against ``dtype``."""
        if field_type not in _FIELD_TYPES:
            raise DataElementValueError(
                f"field_type of {name!r} must be 'metainfo' or 'data', got {field_type!r}"
            )
        if dtype is not None and not isinstance(value, dtype):
            raise DataElementTypeError(
                f"field {name!r} of {type(self).__name__} should be a {_type_name(dtype)} but "
                f"got {type(value).__name__}: {value!r}"
            )
        self._check_name(name, field_type)
        # A property's setter runs here and may store its value in a private twin field.
        object.__setattr__(self, name, value)
        table = self._metainfo_names if field_type == "metainfo" else self._data_names
        table[name] = None

    def _check_name(self, name: str, field_type: str) -> None:
        if name in _TABLES:
            raise AttributeError(
                f"{name} has been used as a private attribute, which is immutable."
            )
        other_type, other_table = (
            ("data", self._data_names)
            if field_type == "metainfo"
            else ("metainfo", self._metainfo_names)
        )
        if name in other_table:
            raise AttributeError(
                f"Cannot set {name} to be a field of {field_type} because {name} is already "
                f"a {other_type} field"
            )
        if name in method_names(type(self)):
            # MMEngine takes it; the element's own calls of the method then fail.
            warnings.warn(
                f"field {name!r} of {field_type} hides the method {type(self).__name__}.{name}: "
                f"this element's {name}() is no longer callable",
                stacklevel=4,
            )

    def _checked_data(self, name: str, value: Any) -> Any:
        """The value that ``setattr`` stores for data field ``name``; subclasses check shapes
        here. ``set_field`` (what a property's setter calls) stores values unchecked, as
        MMEngine's does."""
        return value

    def _another_data_field(self, name: str) -> str | None:
        """The first data field other than ``name``: what a new value must agree with."""
        # A property and its private twin hold one value: replacing it changes nothing else.
        same = {name, "_" + name, name[1:] if name.startswith("_") else name}
        for field in self._data_names:
            if field not in same:
                return field
        return None

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _TABLES:
            raise AttributeError(_IMMUTABLE.format(name=name))
        self.set_field(self._checked_data(name, value), name, field_type="data")

    def __delattr__(self, name: str) -> None:
        if name in _TABLES:
            raise AttributeError(
                f"{name} has been used as a private attribute, which is immutable."
            )
        object.__delattr__(self, name)
        self._metainfo_names.pop(name, None)
        self._data_names.pop(name, None)

    __delitem__ = __delattr__

    # ---- reading fields -----------------------------------------------------------------

    def get(self, key: str, default: Any = None) -> Any:
        """The attribute ``key``, or ``default`` when there is none."""
        return getattr(self, key, default)

    def pop(self, name: str, *default: Any) -> Any:
        """Remove field ``name`` and return its value; ``default`` when it is no field."""
        if len(default) > 1:
            raise DataElementTypeError(
                f"pop got more than 2 arguments (name and default): got {1 + len(default)}"
            )
        if name in self:
            value = getattr(self, name)
            delattr(self, name)
            return value
        if default:
            return default[0]
        raise KeyError(f"{name} is not contained in metainfo or data")

    def __contains__(self, name: str) -> bool:
        return name in self._data_names or name in self._metainfo_names

    def keys(self) -> list[str]:
        """Names of the data fields, in the order they were set."""
        properties = property_names(type(self))
        if not properties:
            return list(self._data_names)
        # A property ``gt`` keeps its value in ``_gt``: list the property, not its storage.
        hidden = {"_" + name for name in self._data_names if name in properties}
        return [name for name in self._data_names if name not in hidden]

    def values(self) -> list[Any]:
        """Values of the data fields, in the order of ``keys()``."""
        return [getattr(self, name) for name in self.keys()]

    def items(self) -> Iterator[tuple[str, Any]]:
        """``(name, value)`` of each data field."""
        for name in self.keys():
            yield name, getattr(self, name)

    def metainfo_keys(self) -> list[str]:
        """Names of the metainfo fields, in the order they were set."""
        return list(self._metainfo_names)

    def metainfo_values(self) -> list[Any]:
        """Values of the metainfo fields."""
        return [getattr(self, name) for name in self._metainfo_names]

    def metainfo_items(self) -> Iterator[tuple[str, Any]]:
        """``(name, value)`` of each metainfo field."""
        for name in self.metainfo_keys():
            yield name, getattr(self, name)

    def all_keys(self) -> list[str]:
        """Metainfo names, then data names."""
        return self.metainfo_keys() + self.keys()

    def all_values(self) -> list[Any]:
        """Metainfo values, then data values."""
        return self.metainfo_values() + self.values()

    def all_items(self) -> Iterator[tuple[str, Any]]:
        """Metainfo items, then data items."""
        yield from self.metainfo_items()
        yield from self.items()

    @property
    def metainfo(self) -> dict[str, Any]:
        """The metainfo fields as a new dict (the values themselves are not copied)."""
        return dict(self.metainfo_items())

    def to_dict(self) -> dict[str, Any]:
        """All fields as a dict; nested elements become dicts too."""
        return {
            name: value.to_dict() if isinstance(value, BaseDataElement) else value
            for name, value in self.all_items()
        }

    # ---- copies and conversions ---------------------------------------------------------

    def new(self, *, metainfo: Mapping[str, Any] | None = None, **kwargs: Any) -> BaseDataElement:
        """An element of the same class: ``metainfo`` or a copy of this one's, and the data
        given as keywords or else this one's data (shared, not copied)."""
        element = type(self)()
        element.set_metainfo(self.metainfo if metainfo is None else metainfo)
        element.set_data(kwargs if kwargs else dict(self.items()))
        return element

    def clone(self) -> BaseDataElement:
        """A new element with a copy of the metainfo and the same data values.

        Fields set or deleted on the clone leave this element alone; tensors are shared.
        """
        return self.new()

    def _converted(self, convert: Callable[[Any], Any]) -> BaseDataElement:
        # Metainfo stays as it is: conversions move data, not descriptions of it.
        return self.new(**{name: convert(value) for name, value in self.items()})

    def to(self, *args: Any, **kwargs: Any) -> BaseDataElement:
        """Apply ``.to(*args, **kwargs)`` to every data value that has a ``to`` method."""
        return self._converted(
            lambda value: value.to(*args, **kwargs) if hasattr(value, "to") else value
        )

    def _tensors_and_elements(self, method: str) -> BaseDataElement:
        def convert(value: Any) -> Any:
            if isinstance(value, (torch.Tensor, BaseDataElement)):
                return getattr(value, method)()
            return value

        return self._converted(convert)

    def cpu(self) -> BaseDataElement:
        """Data tensors (and nested elements) moved to the CPU."""
        return self._tensors_and_elements("cpu")

    def cuda(self) -> BaseDataElement:
        """Data tensors (and nested elements) moved to the current CUDA device."""
        return self._tensors_and_elements("cuda")

    def musa(self) -> BaseDataElement:
        """Data tensors (and nested elements) moved to the current MUSA device."""
        return self._tensors_and_elements("musa")

    def npu(self) -> BaseDataElement:
        """Data tensors (and nested elements) moved to the current NPU."""
        return self._tensors_and_elements("npu")

    def mlu(self) -> BaseDataElement:
        """Data tensors (and nested elements) moved to the current MLU."""
        return self._tensors_and_elements("mlu")

    def detach(self) -> BaseDataElement:
        """Data tensors (and nested elements) detached from the autograd graph."""
        return self._tensors_and_elements("detach")

    def numpy(self) -> BaseDataElement:
        """Data tensors as NumPy arrays (detached, on the CPU); nested elements too."""

        def convert(value: Any) -> Any:
            if isinstance(value, torch.Tensor):
                return value.detach().cpu().numpy()
            if isinstance(value, BaseDataElement):
                return value.numpy()
            return value

        return self._converted(convert)

    def to_tensor(self) -> BaseDataElement:
        """Data NumPy arrays as tensors (sharing memory); nested elements too."""

        def convert(value: Any) -> Any:
            if isinstance(value, np.ndarray):
                return torch.from_numpy(value)
            if isinstance(value, BaseDataElement):
                return value.to_tensor()
            return value

        return self._converted(convert)

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Elements pickled by treadle 0.1.0 or by MMEngine hold the tables under
        # `_metainfo_fields`/`_data_fields` (MMEngine's as sets): take them as the name tables.
        for old, new in _OLD_TABLES:
            if old in state:
                state[new] = dict.fromkeys(state.pop(old))
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return element_repr(self, self.metainfo_items(), self.items())
