"""A data element's field name tables (``_metainfo_fields``, ``_data_fields``) answer as
MMEngine's sets: toolboxes' own data elements add and remove names through them (a multi-level
pixel data, a pose data sample); they keep the order fields were set in, cannot be replaced,
and elements pickled with MMEngine's tables load."""

from __future__ import annotations

import copy
import pickle
from collections.abc import MutableSet

import pytest
import torch

from treadle.runner.structures import BaseDataElement, InstanceData, PixelData
from treadle.runner.structures.field_names import FieldNames


def test_the_tables_answer_as_sets_and_keep_the_order():
    sample = BaseDataElement(metainfo=dict(img_shape=(2, 2)), b=1, a=2)
    fields = sample._data_fields
    assert isinstance(fields, FieldNames) and isinstance(fields, MutableSet)
    assert fields == {"a", "b"} and {"b", "a"} == fields
    assert fields != {"a"} and fields != ["a", "b"]
    assert list(fields) == ["b", "a"] and len(fields) == 2 and "a" in fields
    assert fields - {"a"} == {"b"} and {"a", "c"} - fields == {"c"}
    assert fields | {"c"} == {"a", "b", "c"} and {"c"} | fields == {"a", "b", "c"}
    assert fields & {"a", "c"} == {"a"} and fields ^ {"a", "c"} == {"b", "c"}
    assert type(fields - {"a"}) is set
    assert fields <= {"a", "b", "c"} and fields < {"a", "b", "c"} and fields >= {"a"}
    assert fields.issubset({"a", "b"}) and fields.issuperset(["a"])
    assert fields.isdisjoint({"img_shape"})
    assert fields.union(["c"]) == {"a", "b", "c"} and fields.difference(["b"]) == {"a"}
    assert fields.intersection({"b"}) == {"b"}
    assert fields.symmetric_difference({"b", "c"}) == {"a", "c"}
    assert fields.copy() == {"a", "b"} and type(fields.copy()) is set
    assert sample._metainfo_fields == {"img_shape"}
    assert repr(fields) == "{'b', 'a'}" and repr(BaseDataElement()._data_fields) == "set()"


def test_changes_through_the_view_change_the_element():
    sample = BaseDataElement(x=1)
    names = sample._data_fields
    object.__setattr__(sample, "y", 2)
    names.add("y")
    names.add("x")
    assert sample.keys() == ["x", "y"] and "y" in sample
    object.__setattr__(sample, "z", 3)
    object.__setattr__(sample, "w", 4)
    names.update({"z": 1}, ["w"])
    assert sample.keys() == ["x", "y", "z", "w"]
    names.discard("nope")
    names.remove("z")
    with pytest.raises(KeyError):
        names.remove("z")
    assert names.pop() == "x"
    names -= {"w"}
    assert sample.keys() == ["y"]
    names.clear()
    assert sample.keys() == [] and "y" not in sample


@pytest.mark.parametrize("name", ["_data_fields", "_metainfo_fields", "_data_names"])
def test_the_tables_cannot_be_replaced(name):
    sample = BaseDataElement(a=1)
    message = f"{name} has been used as a private attribute, which is immutable"
    with pytest.raises(AttributeError, match=message):
        setattr(sample, name, set())
    with pytest.raises(AttributeError, match=message):
        delattr(sample, name)
    if name.endswith("_fields"):
        # Not even past the element's own __setattr__ (the class attribute refuses it).
        with pytest.raises(AttributeError, match=message):
            object.__setattr__(sample, name, set())
        with pytest.raises(AttributeError, match=message):
            object.__delattr__(sample, name)
    assert sample._data_fields == {"a"}


def test_an_element_whose_init_did_not_run_says_so():
    class NoInit(BaseDataElement):
        def __init__(self):
            pass

    with pytest.raises(AttributeError, match="NoInit has no _data_fields: its __init__ did not"):
        _ = NoInit()._data_fields


def test_elements_copy_and_pickle_with_their_tables():
    sample = BaseDataElement(metainfo=dict(img_shape=(2, 2)), a=1)
    for other in (copy.deepcopy(sample), pickle.loads(pickle.dumps(sample)), sample.clone()):
        assert other._data_fields == {"a"} and other._metainfo_fields == {"img_shape"}
        other.b = 2
        assert sample.keys() == ["a"]
    sample.b = 2
    del sample.a
    assert list(sample._data_fields) == ["b"]


def test_a_pickled_state_with_mmengines_tables_loads():
    """Elements pickled by MMEngine (sets) or treadle 0.1.0 (dicts) keep their tables under
    `_metainfo_fields`/`_data_fields`."""
    for table in (set, dict.fromkeys):
        state = {
            "_metainfo_fields": table(["img_shape"]),
            "_data_fields": table(["bboxes"]),
            "img_shape": (2, 2),
            "bboxes": torch.zeros(1, 4),
        }
        element = InstanceData.__new__(InstanceData)
        element.__setstate__(dict(state))
        assert element.keys() == ["bboxes"] and element.metainfo == {"img_shape": (2, 2)}
        assert len(element) == 1 and "bboxes" in element
        element.labels = torch.zeros(1)
        assert element._data_fields == {"bboxes", "labels"}


class LevelsData(BaseDataElement):
    """Like a toolbox's multi-level pixel data: one PixelData per level, and the data fields
    kept in the table by the element itself."""

    def set_field(self, value, name, dtype=None, field_type="data"):
        if field_type == "metainfo":
            self._metainfo_fields.add(name)
        else:
            for i, level in enumerate(value):
                key = f"_level_{i}"
                if key not in self.__dict__:
                    object.__setattr__(self, key, PixelData())
                getattr(self, key).set_field(level, name)
            self._data_fields.add(name)
        object.__setattr__(self, name, value)

    def __delattr__(self, item):
        if item in self._metainfo_fields:
            super().__delattr__(item)
        else:
            object.__delattr__(self, item)
            self._data_fields.remove(item)


def test_a_toolbox_element_that_adds_fields_to_the_tables():
    data = LevelsData(metainfo=dict(stride=4))
    data.heatmaps = [torch.zeros(1, 2, 2), torch.ones(1, 1, 1)]
    assert "heatmaps" in data and data.keys() == ["heatmaps"]
    assert data._level_1.heatmaps.shape == (1, 1, 1)
    assert data.metainfo == {"stride": 4}
    del data.heatmaps
    assert "heatmaps" not in data and data.keys() == []


class PoseSample(BaseDataElement):
    """Like a pose data sample: a property kept in a private twin field, and code that reads
    the table as a set (MMEngine's keys() does: ``self._data_fields - private_keys``)."""

    @property
    def gt_fields(self):
        return self._gt_fields

    @gt_fields.setter
    def gt_fields(self, value):
        self.set_field(value, "_gt_fields", dtype=PixelData)

    def visible_fields(self):
        private = {
            "_" + key
            for key in self._data_fields
            if isinstance(getattr(type(self), key, None), property)
        }
        return self._data_fields - private


def test_set_operations_on_a_sample_with_a_property():
    sample = PoseSample()
    sample.gt_fields = PixelData(heatmaps=torch.zeros(1, 2, 2))
    # The property's name and its private twin, as in MMEngine.
    assert sample._data_fields == {"gt_fields", "_gt_fields"}
    assert sample.visible_fields() == {"gt_fields"}
    assert sample.keys() == ["gt_fields"]
