"""Type checks, casts, slicing and n-tuples of treadle.runner.utils."""

from __future__ import annotations

from collections import deque

import pytest

from treadle.runner.utils import (
    concat_list,
    is_list_of,
    is_seq_of,
    is_str,
    is_tuple_of,
    iter_cast,
    list_cast,
    slice_list,
    to_1tuple,
    to_2tuple,
    to_3tuple,
    to_4tuple,
    to_ntuple,
    tuple_cast,
)


def test_is_str():
    assert is_str("a") and is_str("")
    assert not is_str(b"a") and not is_str(1) and not is_str(["a"])


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (([1, 2], int), True),
        (((1, "a"), int), False),
        (("ab", str), True),  # a str is a sequence of str
        (([], int), True),
        (([True], int), True),  # bool is an int
        ((range(3), int), True),
        (({1, 2}, int), False),  # a set is not a sequence
        ((deque([1]), int), True),  # registered as a Sequence
        ((1, int), False),
        (([1, "a"], (int, str)), True),
        (([1], int, tuple), False),
        (((1,), int, tuple), True),
    ],
)
def test_is_seq_of(args, expected):
    assert is_seq_of(*args) is expected


def test_is_list_of_and_is_tuple_of_check_the_container():
    assert is_list_of([1, 2], int) and not is_list_of((1, 2), int)
    assert is_tuple_of((1, 2), int) and not is_tuple_of([1, 2], int)
    assert not is_list_of([1, "a"], int)


def test_iter_cast_is_lazy_without_return_type():
    casts = iter_cast(["1", "2"], int)
    assert not isinstance(casts, list)
    assert list(casts) == [1, 2]
    assert iter_cast(("1", "2.5"), float, list) == [1.0, 2.5]


def test_list_and_tuple_cast():
    assert list_cast("12", int) == [1, 2]
    assert tuple_cast([1.5, 2], int) == (1, 2)


def test_iter_cast_refuses_non_iterables_and_non_types():
    with pytest.raises(TypeError, match="inputs must be an iterable object, got int"):
        iter_cast(1, int)
    with pytest.raises(TypeError, match='"dst_type" must be a valid type, got 3'):
        iter_cast([1], 3)


def test_slice_list_by_lengths_and_by_one_length():
    assert slice_list([1, 2, 3, 4, 5], [2, 3]) == [[1, 2], [3, 4, 5]]
    assert slice_list([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]
    assert slice_list((1, 2, 3), [1, 2]) == [(1,), (2, 3)]  # pieces keep the sequence's type
    assert slice_list([], []) == []


def test_slice_list_errors_name_the_lengths():
    with pytest.raises(ValueError, match="sum of lens and list length does not match: 4 != 3"):
        slice_list([1, 2, 3], [2, 2])
    with pytest.raises(ValueError, match="a list of length 3 does not cut into pieces of length 2"):
        slice_list([1, 2, 3], 2)
    with pytest.raises(AssertionError, match="pieces of length 2"):  # MMEngine's type too
        slice_list([1, 2, 3], 2)
    with pytest.raises(ValueError, match="pieces of length 0"):
        slice_list([1, 2], 0)
    with pytest.raises(
        TypeError, match=r"\"indices\" must be an integer or a list of integers, got 'a'"
    ):
        slice_list([1, 2, 3], "a")


def test_concat_list():
    assert concat_list([[1], [2, 3], (4,)]) == [1, 2, 3, 4]
    assert concat_list(["ab", "c"]) == ["a", "b", "c"]
    assert concat_list([]) == []


def test_ntuples_repeat_single_values_and_keep_iterables():
    assert to_1tuple(None) == (None,)
    assert to_2tuple(3) == (3, 3)
    assert to_3tuple(0.5) == (0.5, 0.5, 0.5)
    assert to_4tuple(1) == (1, 1, 1, 1)
    assert to_ntuple(5)(1) == (1,) * 5
    kept = [1, 2]
    assert to_2tuple(kept) is kept
    assert to_3tuple("ab") == "ab"  # a str is iterable: kept, as in MMEngine
