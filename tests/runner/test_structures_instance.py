"""InstanceData through its public API: equal lengths, indexing, cat."""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

from treadle.runner.structures import InstanceData


class Masks:
    """A user's per-instance container: ``__len__``, ``__getitem__`` and ``cat``."""

    def __init__(self, rows):
        self.rows = list(rows)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, item):
        return Masks(self.rows[item])

    @classmethod
    def cat(cls, pieces):
        return cls([row for piece in pieces for row in piece.rows])


class NoCat:
    def __init__(self, rows):
        self.rows = list(rows)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, item):
        return NoCat(self.rows[item])


def make_instances() -> InstanceData:
    return InstanceData(
        metainfo=dict(img_id=3),
        t=torch.arange(4),
        a=np.arange(4) * 10,
        names=["w", "x", "y", "z"],
        word="abcd",
        pairs=(1, 2, 3, 4),
        masks=Masks("pqrs"),
    )


def rows_of(instances: InstanceData) -> dict:
    return dict(
        t=instances.t.tolist(),
        a=instances.a.tolist(),
        names=instances.names,
        word=instances.word,
        pairs=instances.pairs,
        masks=instances.masks.rows,
    )


def expected(*positions: int) -> dict:
    return dict(
        t=list(positions),
        a=[10 * p for p in positions],
        names=["wxyz"[p] for p in positions],
        word="".join("abcd"[p] for p in positions),
        pairs=tuple(p + 1 for p in positions),
        masks=["pqrs"[p] for p in positions],
    )


def test_fields_of_unequal_length_name_the_field_and_both_lengths():
    instances = InstanceData(bboxes=torch.zeros(3, 4))
    with pytest.raises(
        ValueError, match="field 'labels' has length 2, but field 'bboxes' has length 3"
    ) as raised:
        instances.labels = torch.zeros(2)
    # MMEngine asserts here, and its users catch AssertionError; its phrase is kept too.
    assert isinstance(raised.value, AssertionError)
    assert "is not consistent with the length of this :obj:`InstanceData`" in str(raised.value)
    with pytest.raises(
        ValueError, match="field 'scores' has length 4, but field 'bboxes' has length 3"
    ):
        instances["scores"] = [1, 2, 3, 4]
    with pytest.raises(ValueError, match="field 'b' has length 1, but field 'a' has length 2"):
        InstanceData(a=[1, 2], b=[1])
    assert instances.keys() == ["bboxes"]


def test_set_field_stores_the_value_unchecked():
    # As MMEngine's: set_field is what a property's setter calls; setattr checks lengths.
    instances = InstanceData(bboxes=torch.zeros(3, 4))
    instances.set_field([1], "extra")
    assert instances.extra == [1] and instances.keys() == ["bboxes", "extra"]


def test_an_instance_without_rows_takes_a_field_of_any_length():
    # As MMEngine: lengths are compared only while the instance has rows.
    instances = InstanceData(bboxes=torch.zeros(0, 4))
    instances.labels = torch.zeros(5)
    assert len(instances) == 0 and instances.labels.shape == (5,)


def test_the_only_field_can_be_replaced():
    instances = InstanceData(bboxes=torch.zeros(3, 4))
    instances.bboxes = torch.zeros(1, 4)
    assert len(instances) == 1


def test_values_need_a_length():
    instances = InstanceData(a=[1])
    with pytest.raises(
        TypeError, match=r"field 'b' .* value must contain `__len__` attribute, got int: 5"
    ) as raised:
        instances.b = 5
    assert isinstance(raised.value, AssertionError)


def test_a_zero_d_tensor_is_taken_and_has_no_length():
    # A 0-d tensor has __len__, so MMEngine takes it; len() of it fails as torch's does.
    instances = InstanceData(a=torch.tensor(1))
    with pytest.raises(TypeError, match="0-d tensor"):
        len(instances)


def test_setitem_needs_a_str_key():
    with pytest.raises(TypeError, match="attribute name must be string"):
        InstanceData(a=[1])[1] = [2]


def test_metainfo_has_no_length_check():
    instances = InstanceData(metainfo=dict(sizes=[1, 2, 3]), a=[1])
    assert len(instances) == 1 and instances.sizes == [1, 2, 3]


def test_len():
    assert len(make_instances()) == 4
    assert len(InstanceData(metainfo=dict(a=1))) == 0


@pytest.mark.parametrize(
    ("index", "positions"),
    [
        (1, [1]),
        (-1, [3]),
        (np.int64(2), [2]),
        (torch.tensor(0), [0]),
        (slice(1, 3), [1, 2]),
        (slice(None, None, 2), [0, 2]),
        (slice(3, 1), []),
        (torch.tensor([True, False, True, False]), [0, 2]),
        (np.array([False, False, False, True]), [3]),
        ([True, True, False, False], [0, 1]),
        (torch.zeros(4, dtype=torch.bool), []),
        (torch.tensor([3, 0]), [3, 0]),
        (torch.tensor([2, 2, 1]), [2, 2, 1]),
        (torch.tensor([-1, 0]), [3, 0]),
        (torch.tensor([1, 3], dtype=torch.int32), [1, 3]),
        (np.array([3, 0]), [3, 0]),
        (np.array([3, 0], dtype=np.uint8), [3, 0]),
        ([3, 0, 1], [3, 0, 1]),
        ([], []),
        (torch.tensor([], dtype=torch.long), []),
    ],
)
def test_indexing_selects_the_same_rows_of_every_field(index, positions):
    selected = make_instances()[index]
    assert type(selected) is InstanceData
    assert selected.metainfo == dict(img_id=3)
    assert rows_of(selected) == expected(*positions)
    assert len(selected) == len(positions)


def test_an_int_keeps_a_row_of_length_one():
    row = make_instances()[2]
    assert row.t.shape == (1,) and row.names == ["y"]


def test_a_str_reads_the_field():
    assert make_instances()["names"] == ["w", "x", "y", "z"]
    with pytest.raises(AttributeError, match="missing"):
        make_instances()["missing"]


def test_slices_are_views_and_metainfo_is_copied():
    instances = make_instances()
    part = instances[0:2]
    assert part.t.data_ptr() == instances.t.data_ptr()
    part.set_metainfo(dict(img_id=9))
    assert instances.img_id == 3


@pytest.mark.parametrize(
    ("index", "error", "message"),
    [
        (4, IndexError, "Index 4 out of range for InstanceData of length 4"),
        (-5, IndexError, "Index -5 out of range for InstanceData of length 4"),
        (torch.tensor([7]), IndexError, "index 7 is out of"),
        (np.array([0.5]), TypeError, "must be integers or booleans, got float64"),
    ],
)
def test_bad_indices_say_what_is_wrong(index, error, message):
    with pytest.raises(error, match=message):
        make_instances()[index]


@pytest.mark.parametrize(
    ("index", "error", "message"),
    [
        (
            torch.tensor([True, False]),
            IndexError,
            "mask of length 2 does not match the shape of the indexed tensor: .* length 4",
        ),
        (
            torch.tensor([[1]]),
            IndexError,
            r"Only support to get the values along the first dimension.* shape \(1, 1\)",
        ),
        (torch.tensor([0.5]), TypeError, "must be integers or booleans, got torch.float32"),
        (1.0, TypeError, "cannot be indexed with float"),
        ((1, 2), TypeError, "cannot be indexed with tuple"),
    ],
)
def test_indices_mmengine_asserts_on_are_also_assertion_errors(index, error, message):
    with pytest.raises(error, match=message) as raised:
        make_instances()[index]
    assert isinstance(raised.value, AssertionError)


def test_a_bool_index_reads_as_a_row_with_a_warning():
    # MMEngine reads True as row 1 (a bool is an int to Python).
    with pytest.warns(UserWarning, match="indexed with True: it reads as row 1"):
        row = make_instances()[True]
    assert row.names == ["x"]


def test_rows_of_a_list_out_of_range_are_picked_as_mmengine_picks_them():
    # MMEngine takes value[i::len(value)]: nothing past the end, the first row before the start.
    instances = InstanceData(names=["a", "b", "c"], word="abc", pairs=(1, 2, 3))
    picked = instances[torch.tensor([5, 1, -7])]
    assert picked.names == ["b", "a"] and picked.word == "ba" and picked.pairs == (2, 1)
    assert instances[torch.tensor([-1, 0])].names == ["c", "a"]


def test_a_value_without_cat_cannot_take_a_list_of_rows():
    instances = InstanceData(rows=NoCat([1, 2]))
    assert instances[1].rows.rows == [2]
    message = (
        f"The type of `rows` is `{NoCat}`, which has no attribute of `cat`, so it does not "
        f"support slice with `bool`"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        instances[torch.tensor([True, False])]


def test_nested_instances_are_indexed_too():
    instances = InstanceData(inner=InstanceData(y=torch.arange(3)))
    assert instances[torch.tensor([2, 0])].inner.y.tolist() == [2, 0]


def test_subclasses_stay_subclasses():
    class Boxes(InstanceData):
        pass

    boxes = Boxes(a=[1, 2])
    assert type(boxes[0]) is Boxes
    assert type(InstanceData.cat([boxes, boxes])) is Boxes


def test_cat_joins_rows_in_order():
    instances = make_instances()
    joined = InstanceData.cat([instances, instances[1:3], instances[[0]]])
    assert rows_of(joined) == expected(0, 1, 2, 3, 1, 2, 0)
    assert joined.metainfo == dict(img_id=3)
    assert InstanceData.cat(part for part in [instances[0], instances[1]]).names == ["w", "x"]


def test_cat_of_one_is_that_one():
    instances = make_instances()
    assert InstanceData.cat([instances]) is instances


def test_cat_takes_the_metainfo_of_the_first():
    joined = InstanceData.cat(
        [InstanceData(metainfo=dict(m=1), a=[1]), InstanceData(metainfo=dict(m=2), a=[2])]
    )
    assert joined.m == 1 and joined.a == [1, 2]


def test_cat_errors_name_what_differs():
    # Where MMEngine asserts, the error is also an AssertionError.
    with pytest.raises(ValueError, match="at least one InstanceData, got none") as raised:
        InstanceData.cat([])
    assert isinstance(raised.value, AssertionError)
    with pytest.raises(TypeError, match="item 1 is int") as raised:
        InstanceData.cat([InstanceData(a=[1]), 3])
    assert isinstance(raised.value, AssertionError)
    with pytest.raises(
        ValueError,
        match=r"different keys in `instances_list`.* item 1 lacks \['a'\] and adds \['b'\]",
    ) as raised:
        InstanceData.cat([InstanceData(a=[1]), InstanceData(b=[1])])
    assert isinstance(raised.value, AssertionError)
    with pytest.raises(ValueError, match=r"item 2 lacks \['m'\] and adds \[\]"):
        InstanceData.cat([InstanceData(metainfo=dict(m=1), a=[1])] * 2 + [InstanceData(a=[2])])
    message = f"The type of `rows` is `{NoCat}` which has no attribute of `cat`"
    with pytest.raises(ValueError, match=re.escape(message)):
        InstanceData.cat([InstanceData(rows=NoCat([1]))] * 2)


def test_conversions_keep_rows():
    instances = make_instances()
    assert instances.to(torch.float64).t.dtype == torch.float64
    arrays = instances.numpy()
    assert isinstance(arrays.t, np.ndarray) and arrays.names == instances.names
