"""HistoryBuffer built from what MMEngine takes: numpy arrays, lists, tuples, and arrays or
nested lists of more than one dimension (read row after row, as MMEngine's np.append does)."""

from __future__ import annotations

import pytest

from treadle.logging import HistoryBuffer

# treadle-logging needs no numpy; these tests use it where it is installed.
np = pytest.importorskip("numpy")


@pytest.mark.parametrize("make", [np.array, list, tuple])
def test_built_from_arrays_lists_and_tuples(make):
    buffer = HistoryBuffer(make([1, 2, 3]), make([1, 1, 2]))
    assert buffer.mean() == 1.5 and buffer.current() == 3 and buffer.max() == 3


@pytest.mark.parametrize("make", [np.array, list])
def test_a_two_dimensional_history_is_read_row_after_row(make):
    buffer = HistoryBuffer(make([[-1, 1, 1]]), make([[-1, 1, 1]]), max_length=3)
    buffer.update(1)
    values, counts = buffer.data
    assert list(values) == [1, 1, 1] and list(counts) == [1, 1, 1]
    assert HistoryBuffer(np.ones((2, 2)), [1, 1, 1, 1]).mean() == 1.0


def test_histories_of_unequal_length_are_an_assertion_error_too():
    for error in (ValueError, AssertionError):
        with pytest.raises(
            error, match=r"2 values and 1 counts. The lengths of log_history and count_histroy"
        ):
            HistoryBuffer([1, 2], [1])


def test_mmengine_history_attributes_read_the_values_and_counts():
    # MMEngine's private attribute names, which toolbox code and tests read.
    buffer = HistoryBuffer([1.0, 2.0], [1, 2], max_length=3)
    buffer.update(3.0, 4)
    buffer.update(5.0)
    assert buffer._log_history == [2.0, 3.0, 5.0]
    assert buffer._count_history == [2, 4, 1]
    assert "numpy" not in type(buffer._log_history).__module__
