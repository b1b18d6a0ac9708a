"""treadle.runner.structures against MMEngine 0.10's mmengine.structures: each case runs the same
calls through both and compares what a user observes (field values, metainfo, classes, reprs
with addresses masked, the type of the error raised).

MMEngine keeps field names in sets, so its key order changes from one process to the next;
treadle keeps the order fields were set in. Orders are therefore compared as sets, and reprs
with more than one field per block are compared line by line as multisets.

Where MMEngine raises, treadle's error must be an instance of MMEngine's class (its users catch
that). Deliberate differences (docs/runner/data-and-evaluation.md) are in the
``test_deliberate_*`` tests, each with why.

Runs only where mmengine is installed: ``hatch run mmengine:parity``.
"""

from __future__ import annotations

import copy
import pickle
import re
import warnings
from types import SimpleNamespace

import pytest

mm = pytest.importorskip("mmengine.structures")

import numpy as np  # noqa: E402
import torch  # noqa: E402

import treadle.runner.structures as tr  # noqa: E402


class Rows:
    """A user's instance container with ``__getitem__`` and ``cat`` (like mmdet's masks)."""

    def __init__(self, values):
        self.values = list(values)

    def __len__(self):
        return len(self.values)

    def __getitem__(self, item):
        return Rows(self.values[item])

    @classmethod
    def cat(cls, pieces):
        return Rows([value for piece in pieces for value in piece.values])


class NoCat:
    def __init__(self, values):
        self.values = list(values)

    def __len__(self):
        return len(self.values)

    def __getitem__(self, item):
        return NoCat(self.values[item])


def observed(value):
    """What a user sees of ``value``, comparable across the two libraries."""
    if isinstance(value, (mm.BaseDataElement, tr.BaseDataElement)):
        return (
            "element",
            type(value).__name__,
            {name: observed(item) for name, item in value.metainfo_items()},
            {name: observed(item) for name, item in value.items()},
        )
    if isinstance(value, torch.Tensor):
        return ("tensor", str(value.dtype), tuple(value.shape), value.tolist())
    if isinstance(value, np.ndarray):
        return ("array", str(value.dtype), value.shape, value.tolist())
    if isinstance(value, (Rows, NoCat)):
        return (type(value).__name__, value.values)
    if isinstance(value, (list, tuple)):
        return type(value)(observed(item) for item in value)
    if isinstance(value, dict):
        return {name: observed(item) for name, item in value.items()}
    if isinstance(value, str) and "at 0x" in value:
        return _masked(value)
    return value


def run(case, api):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return observed(case(api))
        except Exception as error:
            return ("raises", _builtin_classes(error))


def _builtin_classes(error):
    """The names of the built-in exception classes ``error`` is an instance of, most derived
    first: treadle's errors derive from MMEngine's class where MMEngine raises another one."""
    return tuple(
        kind.__name__
        for kind in type(error).__mro__
        if kind.__module__ == "builtins" and kind not in (Exception, BaseException, object)
    )


def raised(result, kind):
    """Whether ``result`` of run() is an error that ``except kind:`` catches."""
    return isinstance(result, tuple) and result[:1] == ("raises",) and kind in result[1]


def same_or_caught_alike(ours, theirs):
    """Ours observes what theirs does, or raises what catches MMEngine's error."""
    if isinstance(theirs, tuple) and theirs[:1] == ("raises",):
        return raised(ours, theirs[1][0])
    return ours == theirs


def _masked(text):
    return re.sub(r"at 0x[0-9a-f]+", "at 0x?", text)


def sample(api):
    return api.BaseDataElement(
        metainfo=dict(img_shape=(2, 3), tags=["a"]),
        bboxes=torch.arange(8.0).view(2, 4),
        scores=np.array([0.5, 0.25]),
        label="cat",
    )


def instances(api):
    return api.InstanceData(
        metainfo=dict(img_id=3),
        t=torch.arange(4),
        a=np.arange(4) * 10,
        names=["w", "x", "y", "z"],
        word="abcd",
        pairs=(1, 2, 3, 4),
        rows=Rows("pqrs"),
    )


def pixels(api):
    return api.PixelData(
        metainfo=dict(scale=2),
        maps=torch.arange(60).view(3, 4, 5),
        seg=np.arange(20).reshape(4, 5),
    )


def _set(element, name, value):
    setattr(element, name, value)
    return element


def _call(element, method, *args, **kwargs):
    getattr(element, method)(*args, **kwargs)
    return element


BOOL4 = [True, False, True, False]

CASES = {
    # ---- BaseDataElement: fields -------------------------------------------------------
    "construct": lambda api: sample(api),
    "empty": lambda api: api.BaseDataElement(),
    "keys_as_set": lambda api: sorted(sample(api).keys()),
    "metainfo_keys_as_set": lambda api: sorted(sample(api).metainfo_keys()),
    "all_keys_meta_first": lambda api: [
        sorted(sample(api).all_keys()[:2]),
        len(sample(api).all_keys()),
    ],
    "values_as_set": lambda api: sorted(map(repr, sample(api).values())),
    "metainfo_property": lambda api: sample(api).metainfo,
    "metainfo_values": lambda api: sorted(map(repr, sample(api).metainfo_values())),
    "items_is_generator": lambda api: type(sample(api).items()).__name__,
    "all_items": lambda api: sorted(dict(sample(api).all_items())),
    "keys_is_list": lambda api: type(sample(api).keys()).__name__,
    "setattr_data": lambda api: _set(sample(api), "extra", 5),
    "setattr_meta_name": lambda api: _set(sample(api), "img_shape", 5),
    "set_metainfo_data_name": lambda api: _call(sample(api), "set_metainfo", dict(label=1)),
    "set_metainfo_adds": lambda api: _call(sample(api), "set_metainfo", dict(img_id=9)),
    "set_metainfo_replaces": lambda api: _call(sample(api), "set_metainfo", dict(tags=[])),
    "set_data": lambda api: _call(sample(api), "set_data", dict(extra=[1])),
    "set_field_data": lambda api: _call(sample(api), "set_field", 3, "q", dtype=int),
    "set_field_meta": lambda api: _call(sample(api), "set_field", 3, "q", field_type="metainfo"),
    "set_field_meta_on_data": lambda api: _call(
        sample(api), "set_field", 3, "label", None, "metainfo"
    ),
    "set_field_keywords": lambda api: _call(sample(api), "set_field", name="q", value=[2]),
    "set_private_table": lambda api: _set(sample(api), "_data_fields", set()),
    "set_private_meta_table": lambda api: _set(sample(api), "_metainfo_fields", set()),
    "del_private_table": lambda api: delattr(sample(api), "_data_fields"),
    "del_data": lambda api: (lambda s: (delattr(s, "label"), s)[1])(sample(api)),
    "del_meta": lambda api: (lambda s: (delattr(s, "tags"), s)[1])(sample(api)),
    "delitem": lambda api: (lambda s: (s.__delitem__("bboxes"), s)[1])(sample(api)),
    "del_missing": lambda api: delattr(sample(api), "missing"),
    "getattr_missing": lambda api: sample(api).missing,
    "get_data": lambda api: sample(api).get("label"),
    "get_meta": lambda api: sample(api).get("img_shape"),
    "get_missing": lambda api: sample(api).get("missing"),
    "get_default": lambda api: sample(api).get("missing", 7),
    "pop_data": lambda api: (lambda s: (s.pop("label"), s))(sample(api)),
    "pop_meta": lambda api: (lambda s: (s.pop("tags"), s))(sample(api)),
    "pop_default": lambda api: sample(api).pop("missing", 7),
    "pop_missing": lambda api: sample(api).pop("missing"),
    "contains": lambda api: ["label" in sample(api), "tags" in sample(api), "x" in sample(api)],
    "update": lambda api: _call(
        sample(api), "update", api.BaseDataElement(metainfo=dict(img_id=1), label="dog")
    ),
    "update_conflict": lambda api: _call(
        sample(api), "update", api.BaseDataElement(metainfo=dict(label=1))
    ),
    "new": lambda api: sample(api).new(),
    "new_metainfo": lambda api: sample(api).new(metainfo=dict(z=1)),
    "new_data": lambda api: sample(api).new(extra=1),
    "new_shares_data": lambda api: (lambda s: s.new().bboxes is s.bboxes)(sample(api)),
    "new_copies_metainfo": lambda api: (lambda s: s.new().tags is s.tags)(sample(api)),
    "clone": lambda api: sample(api).clone(),
    "clone_shares_data": lambda api: (lambda s: s.clone().bboxes is s.bboxes)(sample(api)),
    "clone_copies_metainfo": lambda api: (lambda s: s.clone().tags is s.tags)(sample(api)),
    "clone_is_separate": lambda api: (lambda s: (_set(s.clone(), "x", 1), s)[1])(sample(api)),
    "set_metainfo_deep_copies": lambda api: (lambda m: api.BaseDataElement(metainfo=m).n is m["n"])(
        dict(n=[1])
    ),
    "metainfo_property_shares": lambda api: (lambda s: s.metainfo["tags"] is s.tags)(sample(api)),
    "to_dict": lambda api: sample(api).to_dict(),
    "to_dict_nested": lambda api: api.BaseDataElement(
        metainfo=dict(m=api.BaseDataElement(a=1)), x=api.BaseDataElement(metainfo=dict(y=2), z=3)
    ).to_dict(),
    # ---- conversions -----------------------------------------------------------------
    "to_dtype": lambda api: sample(api).to(torch.float64),
    "to_keyword": lambda api: sample(api).to(dtype=torch.float16),
    "to_nested": lambda api: api.BaseDataElement(x=sample(api)).to(torch.float64),
    "to_leaves_metainfo": lambda api: api.BaseDataElement(metainfo=dict(t=torch.ones(1))).to(
        torch.float64
    ),
    "cpu": lambda api: sample(api).cpu(),
    "detach": lambda api: (
        api.BaseDataElement(a=torch.ones(2, requires_grad=True)).detach().a.requires_grad
    ),
    "detach_is_new": lambda api: (lambda s: s.detach() is s)(sample(api)),
    "numpy": lambda api: api.BaseDataElement(
        a=torch.ones(2, requires_grad=True), b=api.BaseDataElement(c=torch.ones(1)), s="x"
    ).numpy(),
    "to_tensor": lambda api: api.BaseDataElement(
        a=np.ones(2), b=api.BaseDataElement(c=np.ones(1)), keep=[np.ones(1)]
    ).to_tensor(),
    "numpy_instances": lambda api: instances(api).numpy(),
    "copy_deepcopy": lambda api: copy.deepcopy(sample(api)),
    "copy_copy": lambda api: copy.copy(sample(api)),
    "pickle": lambda api: pickle.loads(pickle.dumps(sample(api))),
    "equality_is_identity": lambda api: sample(api) == sample(api),
    "truthy_when_empty": lambda api: bool(api.BaseDataElement()),
    "not_iterable": lambda api: list(sample(api)),
    "no_len": lambda api: len(sample(api)),
    "positional_argument": lambda api: api.BaseDataElement(dict(a=1)),
    "new_positional_metainfo": lambda api: sample(api).new(dict(a=1)),
    # ---- InstanceData --------------------------------------------------------------------
    "inst_construct": lambda api: instances(api),
    "inst_len": lambda api: len(instances(api)),
    "inst_len_empty": lambda api: len(api.InstanceData(metainfo=dict(a=1))),
    "inst_int": lambda api: instances(api)[1],
    "inst_negative_int": lambda api: instances(api)[-1],
    "inst_int_out_of_range": lambda api: instances(api)[4],
    "inst_negative_out_of_range": lambda api: instances(api)[-5],
    "inst_slice": lambda api: instances(api)[1:3],
    "inst_slice_step": lambda api: instances(api)[::2],
    "inst_slice_empty": lambda api: instances(api)[3:1],
    "inst_bool_tensor": lambda api: instances(api)[torch.tensor(BOOL4)],
    "inst_bool_tensor_none": lambda api: instances(api)[torch.zeros(4, dtype=torch.bool)],
    "inst_bool_array": lambda api: instances(api)[np.array(BOOL4)],
    "inst_bool_list": lambda api: instances(api)[BOOL4],
    "inst_bool_wrong_length": lambda api: instances(api)[torch.tensor([True, False])],
    "inst_long_tensor": lambda api: instances(api)[torch.tensor([3, 0])],
    "inst_long_tensor_repeats": lambda api: instances(api)[torch.tensor([2, 2, 1])],
    "inst_long_tensor_negative": lambda api: instances(api)[torch.tensor([-1, 0])],
    "inst_long_tensor_empty": lambda api: instances(api)[torch.tensor([], dtype=torch.long)],
    "inst_long_array": lambda api: instances(api)[np.array([3, 0])],
    "inst_int32_array": lambda api: instances(api)[np.array([3, 0], dtype=np.int32)],
    "inst_int_list": lambda api: instances(api)[[3, 0, 1]],
    "inst_2d_tensor": lambda api: instances(api)[torch.tensor([[1]])],
    "inst_float": lambda api: instances(api)[1.0],
    "inst_tuple": lambda api: instances(api)[(1, 2)],
    "inst_str": lambda api: instances(api)["t"],
    "inst_str_missing": lambda api: instances(api)["missing"],
    "inst_nocat_mask": lambda api: api.InstanceData(d=NoCat([1, 2]))[torch.tensor([True, False])],
    "inst_nocat_int": lambda api: api.InstanceData(d=NoCat([1, 2]))[1],
    "inst_nested": lambda api: api.InstanceData(x=api.InstanceData(y=torch.arange(3)))[
        torch.tensor([2, 0])
    ],
    "inst_subclass_kept": lambda api: (
        type(type("Sub", (api.InstanceData,), {})(a=[1, 2])[0]).__name__
    ),
    "inst_unequal_setattr": lambda api: _set(api.InstanceData(a=torch.arange(3)), "b", [1]),
    "inst_unequal_constructor": lambda api: api.InstanceData(a=torch.arange(3), b=torch.ones(2)),
    "inst_no_len": lambda api: _set(api.InstanceData(a=torch.arange(3)), "b", 5),
    "inst_setitem": lambda api: (lambda i: (i.__setitem__("b", [4, 5, 6]), i)[1])(
        api.InstanceData(a=torch.arange(3))
    ),
    "inst_setitem_unequal": lambda api: api.InstanceData(a=torch.arange(3)).__setitem__("b", [1]),
    "inst_setitem_int_key": lambda api: api.InstanceData(a=[1]).__setitem__(1, [1]),
    "inst_metainfo_unchecked": lambda api: api.InstanceData(metainfo=dict(m=[1]), a=[1, 2]),
    "inst_index_copies_metainfo": lambda api: (lambda i: i[0:1].img_id == i.img_id)(instances(api)),
    "inst_slice_is_view": lambda api: (lambda i: i[0:2].t.data_ptr() == i.t.data_ptr())(
        instances(api)
    ),
    "inst_to": lambda api: instances(api).to(torch.float64),
    "inst_repr_single": lambda api: _masked(repr(api.InstanceData(a=torch.arange(2)))),
    # ---- InstanceData.cat ----------------------------------------------------------------
    "cat_two": lambda api: api.InstanceData.cat([instances(api), instances(api)[1:3]]),
    "cat_tuple_of_items": lambda api: api.InstanceData.cat((instances(api), instances(api))),
    "cat_one_is_same": lambda api: (lambda i: api.InstanceData.cat([i]) is i)(instances(api)),
    "cat_empty": lambda api: api.InstanceData.cat([]),
    "cat_other_keys": lambda api: api.InstanceData.cat(
        [api.InstanceData(a=[1]), api.InstanceData(b=[1])]
    ),
    "cat_metainfo_of_first": lambda api: api.InstanceData.cat(
        [api.InstanceData(metainfo=dict(m=1), a=[1]), api.InstanceData(metainfo=dict(m=2), a=[2])]
    ),
    "cat_missing_metainfo_key": lambda api: api.InstanceData.cat(
        [api.InstanceData(metainfo=dict(m=1), a=[1]), api.InstanceData(a=[2])]
    ),
    "cat_not_instance": lambda api: api.InstanceData.cat([instances(api), 3]),
    "cat_base_element": lambda api: api.InstanceData.cat([api.BaseDataElement(a=[1])]),
    "cat_nocat": lambda api: api.InstanceData.cat([api.InstanceData(d=NoCat([1]))] * 2),
    "cat_list_then_tuple": lambda api: api.InstanceData.cat(
        [api.InstanceData(a=[1]), api.InstanceData(a=(2, 3))]
    ),
    "cat_tuple_then_list": lambda api: api.InstanceData.cat(
        [api.InstanceData(a=(1,)), api.InstanceData(a=[2, 3])]
    ),
    "cat_tensor_then_array": lambda api: api.InstanceData.cat(
        [api.InstanceData(a=torch.ones(1)), api.InstanceData(a=np.ones(1))]
    ),
    "cat_nested": lambda api: api.InstanceData.cat(
        [api.InstanceData(x=api.InstanceData(y=torch.arange(2)))] * 2
    ),
    "cat_subclass": lambda api: (
        type(api.InstanceData.cat([type("Sub", (api.InstanceData,), {})(a=[1])] * 2)).__name__
    ),
    # ---- LabelData -----------------------------------------------------------------------
    "onehot_to_label": lambda api: api.LabelData.onehot_to_label(torch.tensor([0, 1, 0, 1])),
    "onehot_to_label_single": lambda api: api.LabelData.onehot_to_label(torch.tensor([0, 1, 0])),
    "onehot_to_label_zeros": lambda api: api.LabelData.onehot_to_label(torch.zeros(3)),
    "onehot_to_label_bool": lambda api: api.LabelData.onehot_to_label(torch.tensor([False, True])),
    "onehot_to_label_two": lambda api: api.LabelData.onehot_to_label(torch.tensor([0, 2])),
    "onehot_to_label_negative": lambda api: api.LabelData.onehot_to_label(torch.tensor([0, -1])),
    "onehot_to_label_2d": lambda api: api.LabelData.onehot_to_label(torch.tensor([[0, 1]])),
    "label_to_onehot": lambda api: api.LabelData.label_to_onehot(torch.tensor([1, 3]), 5),
    "label_to_onehot_keeps_dtype": lambda api: api.LabelData.label_to_onehot(
        torch.tensor([0, 1], dtype=torch.int32), 3
    ),
    "label_to_onehot_empty": lambda api: api.LabelData.label_to_onehot(
        torch.tensor([], dtype=torch.long), 4
    ),
    "label_to_onehot_repeated": lambda api: api.LabelData.label_to_onehot(torch.tensor([1, 1]), 3),
    "label_data": lambda api: api.LabelData(metainfo=dict(num_classes=3), label=torch.tensor([1])),
    "label_data_no_len": lambda api: len(api.LabelData(label=torch.tensor([1]))),
    # ---- PixelData -----------------------------------------------------------------------
    "pix_construct": lambda api: pixels(api),
    "pix_shape": lambda api: pixels(api).shape,
    "pix_shape_empty": lambda api: api.PixelData().shape,
    "pix_2d_tensor_gets_channel": lambda api: api.PixelData(a=torch.zeros(2, 3)),
    "pix_uint8_kept": lambda api: api.PixelData(a=torch.zeros(2, 2, dtype=torch.uint8)),
    "pix_other_size": lambda api: api.PixelData(a=torch.zeros(3, 4, 5), b=torch.zeros(4, 6)),
    "pix_setattr_other_size": lambda api: _set(pixels(api), "c", torch.zeros(4, 4)),
    "pix_1d": lambda api: api.PixelData(a=torch.zeros(4)),
    "pix_4d": lambda api: api.PixelData(a=torch.zeros(1, 1, 4, 4)),
    "pix_list": lambda api: api.PixelData(a=[[1]]),
    "pix_metainfo_unchecked": lambda api: api.PixelData(metainfo=dict(x=3)),
    "pix_crop": lambda api: pixels(api)[1:3, 0:2],
    "pix_crop_int": lambda api: pixels(api)[1, 0:2],
    "pix_crop_ints": lambda api: pixels(api)[1, 2],
    "pix_crop_negative": lambda api: pixels(api)[-1, 0:2],
    "pix_crop_one_slice": lambda api: pixels(api)[1:3],
    "pix_crop_three": lambda api: pixels(api)[1:3, 1:2, 0:1],
    "pix_crop_int_alone": lambda api: pixels(api)[1],
    "pix_crop_str": lambda api: pixels(api)["maps"],
    "pix_crop_mask": lambda api: pixels(api)[torch.tensor([True]), 0:2],
    "pix_no_len": lambda api: len(pixels(api)),
    "pix_numpy": lambda api: pixels(api).numpy(),
    "pix_to_tensor": lambda api: pixels(api).to_tensor(),
    "pix_new_2d": lambda api: pixels(api).new(c=torch.zeros(5, 5)),
    "pix_crop_is_view": lambda api: (lambda p: p[0:2, 0:2].maps.data_ptr() == p.maps.data_ptr())(
        pixels(api)
    ),
    # ---- repr (one field per block: MMEngine's order within a block is a set's order) ------
    "repr_empty": lambda api: _masked(repr(api.BaseDataElement())),
    "repr_one_each": lambda api: _masked(
        repr(api.BaseDataElement(metainfo=dict(m=(1, 2)), t=torch.ones(2, 2)))
    ),
    "repr_string": lambda api: _masked(repr(api.BaseDataElement(s="l1\nl2"))),
    "repr_array": lambda api: _masked(repr(api.BaseDataElement(a=np.ones((2, 2))))),
    "repr_nested_dict": lambda api: _masked(
        repr(api.BaseDataElement(metainfo=dict(a=dict(b=dict(t=torch.ones(2, 2))))))
    ),
    "repr_empty_dict": lambda api: _masked(repr(api.BaseDataElement(x={}))),
    "repr_int_keys": lambda api: _masked(repr(api.BaseDataElement(x={1: "a"}))),
    "repr_nested_element": lambda api: _masked(
        repr(api.BaseDataElement(i=api.InstanceData(metainfo=dict(a=1), b=torch.ones(2, 2))))
    ),
    "repr_element_in_dict": lambda api: _masked(
        repr(api.BaseDataElement(x=dict(e=api.BaseDataElement(y=1))))
    ),
    "repr_element_in_list": lambda api: _masked(
        repr(api.BaseDataElement(x=[api.BaseDataElement(y=1)]))
    ),
    "repr_element_metainfo": lambda api: _masked(
        repr(api.BaseDataElement(metainfo=dict(e=api.BaseDataElement(y=torch.ones(2, 2)))))
    ),
    "repr_pixel": lambda api: _masked(repr(api.PixelData(a=torch.zeros(1, 2, 2)))),
    "repr_label": lambda api: _masked(repr(api.LabelData(label=torch.tensor([1])))),
    "repr_lines_many_fields": lambda api: sorted(_masked(repr(sample(api))).split("\n")),
    "repr_lines_instances": lambda api: sorted(_masked(repr(instances(api)[0:2])).split("\n")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_observation(name):
    case = CASES[name]
    theirs, ours = run(case, mm), run(case, tr)
    assert same_or_caught_alike(ours, theirs), (theirs, ours)


def test_exports_are_mmengines():
    assert sorted(tr.__all__) == sorted(mm.__all__)


def test_public_methods_are_mmengines():
    for name in mm.__all__:
        theirs = {attr for attr in dir(getattr(mm, name)) if not attr.startswith("_")}
        ours = {attr for attr in dir(getattr(tr, name)) if not attr.startswith("_")}
        assert theirs <= ours, (name, theirs - ours)


def _property_sample(api):
    class Sample(api.BaseDataElement):
        @property
        def gt(self):
            return self._gt

        @gt.setter
        def gt(self, value):
            self.set_field(value, "_gt", dtype=api.InstanceData)

        @gt.deleter
        def gt(self):
            del self._gt

    return Sample


@pytest.mark.parametrize(
    "use",
    [
        lambda s: s.keys(),
        lambda s: s.all_keys(),
        lambda s: ["gt" in s, "_gt" in s],
        lambda s: s.to_dict(),
        lambda s: s.clone().gt,
        lambda s: s.numpy().gt,
        lambda s: _masked(repr(s)),
        lambda s: (delattr(s, "gt"), s.keys(), "_gt" in s)[1:],
        lambda s: setattr(s, "gt", 3),
    ],
    ids=["keys", "all_keys", "contains", "to_dict", "clone", "numpy", "repr", "del", "dtype"],
)
def test_property_fields_as_downstream_samples_define_them(use):
    # mmdet and friends store ``gt_instances`` through a property in ``_gt_instances``.
    results = []
    for api in (mm, tr):
        element = _property_sample(api)(metainfo=dict(a=1))
        element.gt = api.InstanceData(x=torch.ones(2))
        results.append(run(lambda _api, element=element: use(element), api))
    assert same_or_caught_alike(results[1], results[0]), results


# ---- deliberate differences ----------------------------------------------------------------


def _both(case):
    return SimpleNamespace(theirs=run(case, mm), ours=run(case, tr))


def test_deliberate_key_order_is_the_order_fields_were_set():
    # MMEngine keeps names in sets: the order changes with PYTHONHASHSEED between runs.
    element = tr.BaseDataElement(metainfo=dict(z=1, a=2), y=1, b=2, m=3)
    assert element.keys() == ["y", "b", "m"]
    assert element.metainfo_keys() == ["z", "a"]


def test_a_field_named_like_a_method_is_taken_as_mmengine_takes_it():
    # Both take it; afterwards sample.keys() calls an int (treadle warns when it is set).
    both = _both(lambda api: api.BaseDataElement(metainfo=dict(keys=3)).keys())
    assert raised(both.theirs, "TypeError") and raised(both.ours, "TypeError")


def test_deliberate_private_tables_cannot_be_replaced_through_set_field():
    # MMEngine replaces its own table of names with the value: reading the element then fails.
    both = _both(lambda api: _call(api.BaseDataElement(), "set_field", 1, "_data_fields"))
    assert raised(both.theirs, "TypeError")
    assert raised(both.ours, "AttributeError")


@pytest.mark.parametrize(
    "case",
    [
        # set_field (a property's storage) takes values unchecked, as MMEngine's does.
        lambda api: _call(api.InstanceData(a=[1, 2]), "set_field", [1, 2, 3], "b"),
        lambda api: _call(api.PixelData(a=torch.zeros(1, 2, 2)), "set_field", [1], "b"),
        # Lengths are compared only while the instance has rows.
        lambda api: _set(api.InstanceData(a=torch.zeros(0)), "b", [1, 2, 3, 4, 5]),
        # A 0-d tensor has __len__: taken, then len() fails.
        lambda api: api.InstanceData(a=torch.tensor(1)),
        lambda api: len(api.InstanceData(a=torch.tensor(1))),
        # value[i::len(value)]: nothing past the end, the first row before the start.
        lambda api: api.InstanceData(a=[1, 2, 3], w="abc")[torch.tensor([5, 1, -7])],
        lambda api: instances(api)[True],
        lambda api: api.LabelData.onehot_to_label(torch.tensor([0.0, 1.0, 0.5])),
        lambda api: pixels(api)[10, 0:2],
        lambda api: pixels(api)[-9, True],
    ],
    ids=[
        "set_field_instance",
        "set_field_pixel",
        "empty_instance",
        "zero_d_field",
        "zero_d_len",
        "list_rows_out_of_range",
        "bool_row",
        "onehot_half",
        "pixel_row_out_of_range",
        "pixel_row_before_start",
    ],
)
def test_what_mmengine_takes_treadle_takes_alike(case):
    both = _both(case)
    assert both.ours == both.theirs


def test_deliberate_the_only_field_can_be_replaced_with_another_length():
    # No other field disagrees, so nothing is inconsistent; MMEngine compares with the old value.
    both = _both(lambda api: _set(api.InstanceData(a=[1, 2, 3]), "a", [1]))
    assert raised(both.theirs, "AssertionError")
    assert both.ours[0] == "element" and both.ours[3] == {"a": [1]}


@pytest.mark.parametrize(
    "index",
    [
        np.int64(1),
        torch.tensor(1),
        torch.tensor([2, 0], dtype=torch.int32),
        [],
    ],
    ids=["numpy_int", "0d_tensor", "int32_tensor", "empty_list"],
)
def test_deliberate_instance_accepts_every_integer_index(index):
    # MMEngine asserts on numpy ints, 0-d and int32 tensors, and fails on an empty list.
    both = _both(lambda api: instances(api)[index])
    assert both.theirs[0] == "raises"
    reference = run(lambda api: instances(api)[np.asarray(index, dtype=np.int64).reshape(-1)], tr)
    assert both.ours == reference


@pytest.mark.parametrize(
    ("label", "num_classes"),
    [
        (torch.tensor([1, 5]), 5),
        (torch.tensor([-1]), 5),  # the last class, as a Python index (treadle warns)
        (torch.tensor([-6]), 5),
        (torch.tensor([0]), 0),
        (torch.tensor([1.0]), 3),
        (torch.tensor([[0, 1]]), 3),
        (torch.tensor([True, False, True]), 3),
        (np.array([1]), 5),
    ],
    ids=["too_big", "negative", "too_negative", "no_classes", "float", "2d", "bool", "array"],
)
def test_label_to_onehot_as_mmengine(label, num_classes):
    both = _both(lambda api: api.LabelData.label_to_onehot(label, num_classes))
    assert same_or_caught_alike(both.ours, both.theirs), both


def test_deliberate_a_zero_d_label_is_one_label():
    both = _both(lambda api: api.LabelData.label_to_onehot(torch.tensor(2), 5))
    assert raised(both.theirs, "TypeError")
    assert both.ours == ("tensor", "torch.int64", (5,), [0, 0, 1, 0, 0])


def test_onehot_to_label_of_an_array_is_caught_alike():
    both = _both(lambda api: api.LabelData.onehot_to_label(np.array([0, 1])))
    assert raised(both.theirs, "AssertionError") and raised(both.ours, "AssertionError")


def test_deliberate_onehot_to_label_of_an_empty_tensor_is_empty():
    both = _both(lambda api: api.LabelData.onehot_to_label(torch.tensor([], dtype=torch.long)))
    assert raised(both.theirs, "RuntimeError")
    assert both.ours == ("tensor", "torch.int64", (0,), [])


def test_deliberate_pixel_accepts_numpy_ints():
    both = _both(lambda api: pixels(api)[np.int64(1), 0:2])
    assert raised(both.theirs, "TypeError")
    assert both.ours == run(lambda api: pixels(api)[1, 0:2], tr)


def test_deliberate_pop_of_a_property_field_returns_its_value():
    # MMEngine pops 'gt' from the instance dict, where a property keeps nothing: KeyError.
    results = []
    for api in (mm, tr):
        element = _property_sample(api)()
        element.gt = api.InstanceData(x=torch.ones(2))
        results.append(run(lambda _api, element=element: (element.pop("gt"), element), api))
    assert raised(results[0], "KeyError")
    assert results[1][0][3] == {"x": ("tensor", "torch.float32", (2,), [1.0, 1.0])}
    assert results[1][1][3] == {}


@pytest.mark.parametrize(
    ("call", "ours"),
    [
        (lambda api: sample(api).set_metainfo([("a", 1)]), "TypeError"),
        (lambda api: sample(api).set_data([("a", 1)]), "TypeError"),
        (lambda api: sample(api).update(dict(a=1)), "TypeError"),
        (lambda api: sample(api).set_field(3, "q", dtype=str), "TypeError"),
        (lambda api: sample(api).set_field(3, "q", field_type="other"), "ValueError"),
        (lambda api: sample(api).pop("a", 1, 2), "TypeError"),
    ],
    ids=["set_metainfo", "set_data", "update", "set_field_dtype", "field_type", "pop"],
)
def test_wrong_arguments_are_treadles_errors_and_mmengines_assertion_errors(call, ours):
    both = _both(call)
    assert raised(both.theirs, "AssertionError")
    assert raised(both.ours, "AssertionError") and raised(both.ours, ours)
