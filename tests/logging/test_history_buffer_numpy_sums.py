"""HistoryBuffer statistics equal, bit for bit, what MMEngine's buffer computes with NumPy.

MMEngine keeps a buffer's history in NumPy arrays (float64 when built empty or from any float,
int64 when built from ints only, until a float is logged) and its mean is
``values[-w:].sum() / counts[-w:].sum()``: NumPy sums pairwise, so a left-to-right sum differs
in the last bit for many windows, which ``==`` comparisons see (MMEngine's own tests make them).
``NumpyModel`` below is that array model, written here to check treadle's buffer against.
"""

from __future__ import annotations

import math
import pickle
import random

import pytest

from treadle.logging import HistoryBuffer
from treadle.logging.numpy_sum import float64_sum, int64_sum

# treadle-logging does not depend on numpy: installed alone (tests/repo), this file is skipped.
np = pytest.importorskip("numpy")


class NumpyModel:
    """A history kept as MMEngine keeps it: numpy arrays grown with ``np.append``."""

    def __init__(self, values=(), counts=()):
        self.values = np.array(list(values))
        self.counts = np.array(list(counts))

    def update(self, value, count=1):
        self.values = np.append(self.values, value)
        self.counts = np.append(self.counts, count)

    def mean(self, window_size=None):
        window = len(self.values) if window_size is None else window_size
        with np.errstate(all="ignore"):
            return self.values[-window:].sum() / self.counts[-window:].sum()


def same(a, b) -> bool:
    """Equal to the last bit (nan equal to nan)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def test_float64_sum_is_numpys_for_every_length_up_to_1000():
    rng = np.random.default_rng(41)
    lengths = [*range(1001), 4095, 8192, 8193, 65537]
    for length in lengths:
        # Magnitudes over ten orders, so that the order of the additions shows in the result.
        array = rng.standard_normal(length) * 10.0 ** rng.uniform(-5, 5, length)
        assert same(float64_sum(array.tolist()), array.sum()), length


def test_float64_sum_converts_ints_as_a_float64_array_does():
    rng = np.random.default_rng(7)
    for length in range(0, 300, 7):
        mixed = [int(x) if i % 3 else x for i, x in enumerate(rng.standard_normal(length) * 1e17)]
        mixed += [2**60 + 1, -(2**55) - 3]  # beyond 2**53: converted with rounding
        assert same(float64_sum(mixed), np.asarray(mixed, dtype=np.float64).sum())


def test_int64_sum_is_exact_and_wraps_as_numpys():
    values = [2**62, 2**62, 5]
    with np.errstate(over="ignore"):
        assert int64_sum(values) == int(np.asarray(values, dtype=np.int64).sum())
    assert int64_sum([3, -4, 2**53 + 1]) == 2**53


@pytest.mark.parametrize("seed", range(5))
def test_mean_equals_mmengines_for_random_windows(seed):
    # MMEngine's test_collect_scalars builds buffers from randn arrays and compares the mean
    # of the last 10 with ``==``: here for every window size and history length up to 300.
    rng = np.random.default_rng(seed)
    values = rng.standard_normal(300)
    counts = np.ones(300)
    buffer = HistoryBuffer(values, counts)
    model = NumpyModel(values, counts)
    for window_size in [None, *range(1, 301)]:
        assert same(buffer.mean(window_size), model.mean(window_size)), window_size
        assert buffer.mean(window_size) == values[-(window_size or 300) :].mean()


def test_mean_of_logged_values_with_float_counts():
    # Built empty: float64 arrays, whatever is logged (ints included).
    rng = random.Random(3)
    buffer, model = HistoryBuffer(), NumpyModel()
    for step in range(700):
        value = rng.choice([rng.uniform(-1e3, 1e3), rng.randint(-9, 9), rng.random() * 1e-9])
        count = rng.choice([1, 2, 0.5, rng.random() + 0.1])
        buffer.update(value, count)
        model.update(value, count)
        if step % 37 == 0:
            for window_size in (None, 10, 128, 129, rng.randint(1, step + 1)):
                assert same(buffer.mean(window_size), model.mean(window_size))


def test_a_history_of_ints_is_int64_until_a_float_is_logged():
    big = [2**53 + 1, 2**53 + 1, 1, 1, 3, 3, 3, 3, 3]  # beyond float64's exact integers
    buffer, model = HistoryBuffer(big, [1] * 9), NumpyModel(big, [1] * 9)
    assert model.values.dtype.kind == "i"
    assert same(buffer.mean(), model.mean())
    assert buffer.mean() != float64_sum(big) / 9  # the int64 sum, not the float64 one
    assert type(buffer.current()) is int and buffer.max() == 2**53 + 1
    buffer.update(7)
    model.update(7)
    assert model.values.dtype.kind == "i"
    assert same(buffer.mean(), model.mean())
    buffer.update(0.5)
    model.update(0.5)
    assert model.values.dtype.kind == "f"
    assert same(buffer.mean(), model.mean())
    assert type(buffer.current()) is float and type(buffer.max()) is float


def test_a_buffer_built_empty_returns_floats_as_mmengines_float64_array():
    buffer = HistoryBuffer()
    buffer.update(3)
    buffer.update(5)
    assert buffer.current() == 5 and type(buffer.current()) is float
    assert type(buffer.max()) is float and type(buffer.min()) is float
    assert buffer.data == ([3, 5], [1, 1])  # stored as logged


def test_max_and_min_return_nan_as_numpy_does():
    values = [1.0, math.nan, 3.0]
    buffer = HistoryBuffer(values, [1, 1, 1])
    assert math.isnan(buffer.max()) and math.isnan(np.max(values))
    assert math.isnan(buffer.min())
    assert buffer.max(1) == 3.0


def test_a_buffer_pickled_by_mmengine_keeps_its_dtypes():
    class Pickled:
        pass

    state = Pickled()
    state.max_length = 10
    state._log_history = np.array([2**53 + 1, 1, 3])
    state._count_history = np.array([1.0, 1.0, 1.0])
    buffer = object.__new__(HistoryBuffer)
    buffer.__setstate__(state.__dict__)
    model = NumpyModel(state._log_history, state._count_history)
    assert same(buffer.mean(), model.mean())
    assert type(buffer.current()) is int
    copy = pickle.loads(pickle.dumps(buffer))
    assert same(copy.mean(), model.mean())
