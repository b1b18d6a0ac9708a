import copy
import math
import pickle

import pytest

from treadle.logging import HistoryBuffer


class FakeArray:
    """Stands in for a numpy scalar or array: .item() and .size, without importing numpy."""

    def __init__(self, *values):
        self.values = values
        self.size = len(values)
        self.shape = (len(values),)
        self.item_calls = 0

    def item(self):
        self.item_calls += 1
        return self.values[0]


def filled(*values, **kwargs):
    buffer = HistoryBuffer(**kwargs)
    for value in values:
        buffer.update(value)
    return buffer


def test_statistics_over_all_values_and_windows():
    buffer = filled(4.0, 2.0, 3.0, 7.0)
    assert buffer.mean() == 4.0
    assert buffer.mean(window_size=2) == 5.0
    assert buffer.mean(window_size=100) == 4.0
    assert buffer.max() == 7.0
    assert buffer.max(window_size=3) == 7.0
    assert buffer.min() == 2.0
    assert buffer.min(window_size=2) == 3.0
    assert buffer.current() == 7.0
    assert buffer.data == ([4.0, 2.0, 3.0, 7.0], [1, 1, 1, 1])
    assert isinstance(buffer.data[0], list)


def test_mean_is_weighted_by_counts():
    buffer = HistoryBuffer()
    buffer.update(10, count=4)  # a sum over 4 samples
    buffer.update(2)
    assert buffer.mean() == 12 / 5
    assert buffer.mean(window_size=1) == 2.0


def test_initial_history():
    buffer = HistoryBuffer([1, 2, 3], [1, 1, 2])
    assert buffer.data == ([1, 2, 3], [1, 1, 2])
    assert buffer.mean() == 1.5
    with pytest.raises(ValueError, match="same length, got 2 values and 1 counts"):
        HistoryBuffer([1, 2], [1])


def test_max_length_drops_the_oldest():
    buffer = filled(1, 2, 3, 4, max_length=3)
    assert buffer.data == ([2, 3, 4], [1, 1, 1])
    with pytest.warns(UserWarning, match="keeps max_length=2: the oldest 1 are dropped"):
        short = HistoryBuffer([1, 2, 3], [1, 1, 1], max_length=2)
    assert short.data == ([2, 3], [1, 1])
    with pytest.raises(ValueError, match="max_length must be at least 1, got 0"):
        HistoryBuffer(max_length=0)
    with pytest.raises(TypeError, match="max_length must be an int, got float"):
        HistoryBuffer(max_length=1.5)


def test_reading_an_empty_buffer():
    buffer = HistoryBuffer()
    assert buffer.data == ([], [])
    for read in (buffer.max, buffer.min, buffer.current):
        with pytest.raises(ValueError, match="HistoryBuffer is empty: call update"):
            read()
    # MMEngine's numpy mean of an empty array: 0.0 / 0.0, nan with a RuntimeWarning.
    with pytest.warns(RuntimeWarning, match="mean of an empty window is nan"):
        assert math.isnan(buffer.mean())


@pytest.mark.parametrize(
    ("window_size", "message"),
    [
        (1.5, "window_size must be an int or None, got float: 1.5 "),
        ("2", "window_size must be an int or None, got str"),
        ([2], "window_size must be an int or None, got list"),
    ],
)
def test_bad_window_size_is_a_type_error_and_mmengines_assertion(window_size, message):
    buffer = filled(1.0)
    for read in (buffer.mean, buffer.max, buffer.min):
        with pytest.raises(TypeError, match=message) as info:
            read(window_size)
        assert isinstance(info.value, AssertionError)
        # MMEngine's words, which its users' tests match.
        assert "The type of window size should be int, but got <class" in str(info.value)


@pytest.mark.parametrize(
    ("window_size", "window", "message"),
    [
        (0, [1.0, 2.0, 6.0], r"window_size=0 means the whole history \(MMEngine's numpy slice "),
        (
            -1,
            [2.0, 6.0],
            r"window_size=-1 means every value but the first 1 \(MMEngine's numpy "
            r"slice \[1:\]\), not the last ones",
        ),
        (-3, [], r"window_size=-3 means every value but the first 3"),
        (True, [6.0], r"window_size=True is read as the int 1, which means the last value"),
        (
            False,
            [1.0, 2.0, 6.0],
            r"window_size=False is read as the int 0, which means the "
            r"whole history",
        ),
    ],
)
def test_windows_mmengine_slices_from_the_end_warn(window_size, window, message):
    # MMEngine reads history[-window_size:] of its numpy array: treadle reads the same values.
    buffer = HistoryBuffer([1.0, 2.0, 6.0], [1, 1, 1])
    with pytest.warns(UserWarning, match=message) as records:
        if window:
            assert buffer.mean(window_size) == sum(window) / len(window)
            assert buffer.max(window_size) == max(window)
            assert buffer.min(window_size) == min(window)
        else:
            with pytest.warns(RuntimeWarning, match="empty window is nan"):
                assert math.isnan(buffer.mean(window_size))
            with pytest.raises(ValueError, match=r"max: window_size=-3 selects none of the 3 "):
                buffer.max(window_size)
    # The warning points at the line that asked for the statistic.
    assert all(record.filename == __file__ for record in records)


def test_counts_summing_to_zero_give_numpys_inf_and_nan():
    buffer = HistoryBuffer([2.0, -2.0], [0, 0])
    with pytest.warns(RuntimeWarning, match="divide by zero encountered in scalar divide"):
        assert buffer.mean(1) == -math.inf
    with pytest.warns(RuntimeWarning, match="invalid value encountered in scalar divide"):
        assert math.isnan(buffer.mean())


@pytest.mark.parametrize("value", ["1.0", None, [1.0], object()])
def test_non_numeric_values_are_rejected(value):
    buffer = HistoryBuffer()
    with pytest.raises(TypeError, match="must be an int, a float, or a tensor or array with one"):
        buffer.update(value)
    assert buffer.data == ([], [])


def test_non_number_count_is_rejected():
    with pytest.raises(
        TypeError,
        match="count must be an int, a float, or a tensor or array with one element, got str",
    ):
        HistoryBuffer().update(1.0, count="2")


def test_number_subclasses_are_stored_as_plain_numbers():
    class Score(float):
        pass

    buffer = filled(True, Score(0.5))
    values, _ = buffer.data
    assert values == [1, 0.5]
    assert [type(v) for v in values] == [int, float]


def test_array_like_values_are_read_at_once():
    scalar = FakeArray(0.25)
    buffer = filled(scalar)
    assert scalar.item_calls == 1  # host memory: nothing to wait for
    assert buffer.current() == 0.25
    with pytest.raises(ValueError, match=r"one element, got a FakeArray of shape \(2,\)"):
        buffer.update(FakeArray(1.0, 2.0))
    with pytest.raises(TypeError, match="must be a number, got str"):
        buffer.update(FakeArray("text"))


def test_statistics_by_name():
    buffer = filled(1.0, 5.0, 3.0)
    assert buffer.statistics("mean") == 3.0
    assert buffer.statistics("mean", 2) == 4.0
    assert buffer.statistics("max", window_size=2) == 5.0
    assert buffer.statistics("min") == 1.0
    assert buffer.statistics("current") == 3.0


def test_custom_statistics():
    @HistoryBuffer.register_statistics
    def last_sum(buffer, n=2):
        values, _ = buffer.data
        return sum(values[-n:])

    assert callable(last_sum)
    buffer = filled(1.0, 5.0, 3.0)
    assert buffer.statistics("last_sum") == 8.0
    assert buffer.statistics("last_sum", n=3) == 9.0
    HistoryBuffer.register_statistics(last_sum)  # the same function again: fine

    def last_sum(buffer):
        return 0

    with pytest.raises(ValueError, match="statistic named 'last_sum' is already registered"):
        HistoryBuffer.register_statistics(last_sum)


def test_unknown_statistics():
    with pytest.raises(
        KeyError,
        match=r"no HistoryBuffer statistic named 'median'; registered: current, max, mean, min",
    ):
        filled(1.0).statistics("median")


def test_pickle_round_trip():
    buffer = filled(1.0, 2.0, 4.0, max_length=10)
    restored = pickle.loads(pickle.dumps(buffer))
    assert restored.data == buffer.data
    assert restored.max_length == 10
    restored.update(8.0)
    assert restored.mean() == 3.75
    assert buffer.mean() == pytest.approx(7 / 3)


def test_deepcopy_is_independent():
    buffer = filled(1.0, 2.0, max_length=3)
    clone = copy.deepcopy(buffer)
    clone.update(3.0)
    clone.update(4.0)
    assert buffer.data == ([1.0, 2.0], [1, 1])
    assert clone.data == ([2.0, 3.0, 4.0], [1, 1, 1])
    assert repr(clone) == "HistoryBuffer(length=3, max_length=3)"


def test_a_cleared_statistics_registry_gets_the_builtin_ones_back():
    # As MMEngine's: a buffer built or unpickled (a checkpoint loaded) restores them.
    saved = dict(HistoryBuffer._statistics_methods)
    pickled = pickle.dumps(HistoryBuffer([1.0, 3.0], [1, 1]))
    try:
        HistoryBuffer._statistics_methods.clear()
        assert pickle.loads(pickled).statistics("min") == 1.0
        assert {"mean", "max", "min", "current"} <= set(HistoryBuffer._statistics_methods)
        HistoryBuffer._statistics_methods.clear()
        assert HistoryBuffer([2.0], [1]).statistics("mean") == 2.0
    finally:
        HistoryBuffer._statistics_methods.update(saved)
