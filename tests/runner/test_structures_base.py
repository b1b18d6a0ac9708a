"""BaseDataElement through its public API: fields, errors, copies, conversions, repr."""

from __future__ import annotations

import copy
import pickle
import re

import numpy as np
import pytest
import torch

from treadle.runner.structures import BaseDataElement, InstanceData


def make_sample() -> BaseDataElement:
    return BaseDataElement(
        metainfo=dict(img_shape=(2, 3), tags=["a"]),
        bboxes=torch.arange(8.0).view(2, 4),
        scores=np.array([0.5, 0.25]),
    )


def test_fields_keep_the_order_they_were_set_in():
    sample = BaseDataElement(metainfo=dict(z=1, a=2), y=1, b=2)
    sample.c = 3
    sample.set_metainfo(dict(m=0))
    assert sample.keys() == ["y", "b", "c"]
    assert sample.values() == [1, 2, 3]
    assert list(sample.items()) == [("y", 1), ("b", 2), ("c", 3)]
    assert sample.metainfo_keys() == ["z", "a", "m"]
    assert sample.metainfo_values() == [1, 2, 0]
    assert sample.all_keys() == ["z", "a", "m", "y", "b", "c"]
    assert sample.all_values() == [1, 2, 0, 1, 2, 3]
    assert dict(sample.all_items()) == dict(z=1, a=2, m=0, y=1, b=2, c=3)
    assert sample.metainfo == dict(z=1, a=2, m=0)


def test_replacing_a_field_keeps_its_place():
    sample = BaseDataElement(a=1, b=2)
    sample.a = 5
    assert list(sample.items()) == [("a", 5), ("b", 2)]


def test_a_metainfo_name_cannot_become_data():
    sample = make_sample()
    with pytest.raises(AttributeError, match="Cannot set img_shape to be a field of data"):
        sample.img_shape = (1, 1)


def test_a_data_name_cannot_become_metainfo():
    sample = make_sample()
    with pytest.raises(AttributeError, match="Cannot set bboxes to be a field of metainfo"):
        sample.set_metainfo(dict(bboxes=1))


@pytest.mark.parametrize("name", ["_data_fields", "_metainfo_fields"])
def test_the_name_tables_are_immutable(name):
    sample = make_sample()
    with pytest.raises(AttributeError, match=f"{name} has been used as a private attribute"):
        setattr(sample, name, {})
    with pytest.raises(AttributeError, match=f"{name} has been used as a private attribute"):
        sample.set_field({}, name)
    with pytest.raises(AttributeError, match=f"{name} has been used as a private attribute"):
        delattr(sample, name)


@pytest.mark.parametrize("name", ["keys", "new", "to", "numpy"])
def test_a_field_named_like_a_method_is_taken_with_a_warning(name):
    # MMEngine takes it silently; the element's own method is then hidden.
    with pytest.warns(UserWarning, match=f"hides the method BaseDataElement.{name}"):
        data = BaseDataElement(**{name: 1})
    assert data.__dict__[name] == 1
    with pytest.warns(UserWarning, match=f"field '{name}' of metainfo hides the method"):
        meta = BaseDataElement(metainfo={name: 2})
    assert meta.__dict__[name] == 2


def test_a_read_only_property_is_no_field():
    element = InstanceData(a=[1])
    with pytest.raises(AttributeError):
        element.metainfo = dict(a=1)
    assert "metainfo" not in element


def test_set_field_checks_dtype_and_names_the_field():
    sample = make_sample()
    sample.set_field(3, "count", dtype=int)
    assert sample.count == 3
    with pytest.raises(
        TypeError, match="field 'label' of BaseDataElement should be a str but got int"
    ) as raised:
        sample.set_field(3, "label", dtype=str)
    assert isinstance(raised.value, AssertionError)  # what MMEngine raises there
    with pytest.raises(AssertionError, match="should be a str or float but got int"):
        sample.set_field(3, "label", dtype=(str, float))
    assert "label" not in sample


def test_set_field_as_metainfo():
    sample = make_sample()
    sample.set_field("x.jpg", "path", field_type="metainfo")
    assert sample.metainfo_keys()[-1] == "path"
    with pytest.raises(
        ValueError, match="field_type of 'path' must be 'metainfo' or 'data'"
    ) as raised:
        sample.set_field("x.jpg", "path", field_type="meta")
    assert isinstance(raised.value, AssertionError)


@pytest.mark.parametrize(
    ("method", "argument", "message"),
    [
        ("set_metainfo", [("a", 1)], "metainfo should be a ``dict`` but got list"),
        ("set_data", 3, "data should be a `dict` but got int: 3"),
        ("update", dict(a=1), "update: instance should be a `BaseDataElement` but got dict"),
    ],
)
def test_wrong_argument_types_are_named(method, argument, message):
    # A TypeError, and the AssertionError that MMEngine's users catch there.
    with pytest.raises(TypeError, match=re.escape(message)) as raised:
        getattr(make_sample(), method)(argument)
    assert isinstance(raised.value, AssertionError)


def test_metainfo_of_the_constructor_must_be_a_mapping():
    with pytest.raises(AssertionError, match="metainfo should be a ``dict``") as raised:
        BaseDataElement(metainfo=[("a", 1)])
    assert isinstance(raised.value, TypeError)


def test_metainfo_is_deep_copied_and_data_is_shared():
    tags = ["a"]
    boxes = torch.zeros(2)
    sample = BaseDataElement(metainfo=dict(tags=tags), boxes=boxes)
    tags.append("b")
    assert sample.tags == ["a"]
    assert sample.boxes is boxes


def test_delete_get_pop_contains():
    sample = make_sample()
    assert "bboxes" in sample and "tags" in sample and "keys" not in sample
    assert sample.get("tags") == ["a"]
    assert sample.get("missing") is None
    assert sample.get("missing", 5) == 5
    del sample.scores
    del sample["tags"]
    assert sample.all_keys() == ["img_shape", "bboxes"]
    assert sample.pop("img_shape") == (2, 3)
    assert sample.pop("missing", 7) == 7
    assert sample.metainfo_keys() == []
    with pytest.raises(KeyError, match="missing is not contained in metainfo or data"):
        sample.pop("missing")
    with pytest.raises(TypeError, match="pop got more than 2 arguments") as raised:
        sample.pop("bboxes", 1, 2)
    assert isinstance(raised.value, AssertionError)
    with pytest.raises(AttributeError, match="missing"):
        del sample.missing


def test_update_copies_fields_over():
    sample = make_sample()
    sample.update(BaseDataElement(metainfo=dict(img_id=4, tags=[]), extra=1))
    assert sample.metainfo == dict(img_shape=(2, 3), tags=[], img_id=4)
    assert sample.keys() == ["bboxes", "scores", "extra"]


def test_new_and_clone():
    sample = make_sample()
    fresh = sample.new(metainfo=dict(img_id=1), extra=5)
    assert fresh.metainfo == dict(img_id=1) and fresh.keys() == ["extra"]
    same = sample.new()
    assert same.metainfo == sample.metainfo and same.tags is not sample.tags
    assert same.bboxes is sample.bboxes
    twin = sample.clone()
    twin.extra = 1
    del twin.scores
    assert sample.keys() == ["bboxes", "scores"]
    assert twin.keys() == ["bboxes", "extra"]


def test_to_dict_converts_nested_elements():
    sample = BaseDataElement(metainfo=dict(m=1), inner=BaseDataElement(metainfo=dict(k=2), v=3))
    assert sample.to_dict() == dict(m=1, inner=dict(k=2, v=3))


def test_conversions_reach_nested_elements_and_leave_metainfo():
    grad = torch.ones(2, requires_grad=True) * 2
    sample = BaseDataElement(
        metainfo=dict(mean=torch.ones(1)),
        x=grad,
        inner=BaseDataElement(y=torch.ones(1)),
        arr=np.ones(3),
        name="n",
    )
    doubled = sample.to(torch.float64)
    assert doubled.x.dtype == torch.float64 and doubled.inner.y.dtype == torch.float64
    assert doubled.mean.dtype == torch.float32
    assert sample.to(dtype=torch.float16).x.dtype == torch.float16
    assert sample.cpu().x.device.type == "cpu"
    assert not sample.detach().x.requires_grad
    arrays = sample.numpy()
    assert isinstance(arrays.x, np.ndarray) and isinstance(arrays.inner.y, np.ndarray)
    assert arrays.name == "n"
    back = arrays.to_tensor()
    assert isinstance(back.arr, torch.Tensor) and isinstance(back.inner.y, torch.Tensor)
    assert back.arr.tolist() == [1.0, 1.0, 1.0]
    assert sample.x.requires_grad  # the original is untouched


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_and_back():
    sample = make_sample().cuda()
    assert sample.bboxes.is_cuda and isinstance(sample.scores, np.ndarray)
    assert sample.cpu().bboxes.device.type == "cpu"


def test_copy_deepcopy_and_pickle_keep_fields():
    sample = make_sample()
    for twin in (copy.copy(sample), copy.deepcopy(sample), pickle.loads(pickle.dumps(sample))):
        assert twin.all_keys() == sample.all_keys()
        assert torch.equal(twin.bboxes, sample.bboxes)
    deep = copy.deepcopy(sample)
    deep.extra = 1
    assert "extra" not in sample


def _masked(text: str) -> str:
    return re.sub(r"at 0x[0-9a-f]+", "at 0x?", text)


def test_repr_layout():
    sample = BaseDataElement(
        metainfo=dict(img_id=1, pad=dict(top=0)),
        boxes=torch.ones(2, 2),
        inner=BaseDataElement(label="x"),
    )
    assert _masked(repr(sample)) == (
        "<BaseDataElement(\n"
        "\n"
        "    META INFORMATION\n"
        "    img_id: 1\n"
        "    pad: \n"
        "        top: 0\n"
        "\n"
        "    DATA FIELDS\n"
        "    boxes: tensor([[1., 1.],\n"
        "                [1., 1.]])\n"
        "    inner: <BaseDataElement(\n"
        "        \n"
        "            META INFORMATION\n"
        "        \n"
        "            DATA FIELDS\n"
        "            label: 'x'\n"
        "        ) at 0x?>\n"
        ") at 0x?>"
    )


class DetSample(BaseDataElement):
    """A downstream sample: the property stores its value in a private twin field."""

    @property
    def gt_instances(self) -> InstanceData:
        return self._gt_instances

    @gt_instances.setter
    def gt_instances(self, value: InstanceData) -> None:
        self.set_field(value, "_gt_instances", dtype=InstanceData)

    @gt_instances.deleter
    def gt_instances(self) -> None:
        del self._gt_instances


def test_property_fields_show_under_their_public_name():
    sample = DetSample(metainfo=dict(img_id=1))
    sample.gt_instances = InstanceData(labels=torch.tensor([1, 2]))
    assert sample.keys() == ["gt_instances"]
    assert "gt_instances" in sample and "_gt_instances" in sample
    assert sample.to_dict()["gt_instances"] == sample.gt_instances.to_dict()
    assert "gt_instances: <InstanceData(" in repr(sample)
    assert sample.clone().gt_instances is sample.gt_instances
    assert isinstance(sample.numpy().gt_instances.labels, np.ndarray)
    with pytest.raises(
        TypeError, match="field '_gt_instances' of DetSample should be a InstanceData"
    ):
        sample.gt_instances = [1, 2]
    popped = sample.pop("gt_instances")
    assert popped.labels.tolist() == [1, 2]
    assert sample.keys() == [] and "_gt_instances" not in sample


def test_deleting_a_property_field_removes_its_twin():
    sample = DetSample(gt_instances=InstanceData(labels=[1]))
    del sample.gt_instances
    assert sample.keys() == [] and "_gt_instances" not in sample
