"""HistoryBuffer takes numpy and torch numbers as values and counts, as MMEngine code passes them.

MMEngine's HistoryBuffer accepts numpy arrays as initial histories; its MessageHub turns numpy
scalars, 0-d arrays and one-element tensors into numbers before they reach the buffer. Code ported
from MMEngine hands such numbers to treadle's buffer directly, counts included.
"""

import pickle

import pytest

from treadle.logging import HistoryBuffer

# treadle-logging depends on neither: installed alone (tests/repo), this file is skipped.
np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")


def test_numpy_histories_as_mmengine_builds_them():
    buffer = HistoryBuffer(np.array([1.0, 2.0, 6.0]), np.array([1, 1, 2]))
    assert buffer.mean() == 9.0 / 4
    values, counts = buffer.data
    assert values == [1.0, 2.0, 6.0]
    assert counts == [1, 1, 2]
    assert [type(c) for c in counts] == [int, int, int]


def test_tensor_histories():
    buffer = HistoryBuffer(torch.tensor([2.0, 4.0]), torch.tensor([1, 3]))
    assert buffer.data == ([2.0, 4.0], [1, 3])
    assert buffer.mean() == 1.5


@pytest.mark.parametrize(
    "value",
    [np.int64(3), np.float32(3.0), np.float64(3.0), np.array(3.0), np.array([3]), torch.tensor(3)],
    ids=["int64", "float32", "float64", "0-d array", "1-element array", "0-d tensor"],
)
def test_numpy_and_torch_values(value):
    buffer = HistoryBuffer()
    buffer.update(value)
    assert buffer.current() == 3
    assert type(buffer.current()) in (int, float)


@pytest.mark.parametrize(
    "count",
    [np.int64(4), np.int32(4), np.float64(4.0), np.array(4), np.array([4]), torch.tensor(4)],
    ids=["int64", "int32", "float64", "0-d array", "1-element array", "0-d tensor"],
)
def test_numpy_and_torch_counts(count):
    buffer = HistoryBuffer()
    buffer.update(10.0, count)
    assert buffer.mean() == 2.5
    (stored,) = buffer.data[1]
    assert stored == 4
    assert type(stored) in (int, float)


def test_integer_counts_stay_ints_and_float_counts_floats():
    buffer = HistoryBuffer()
    buffer.update(1.0, np.int64(2))
    buffer.update(1.0, torch.tensor(3))
    buffer.update(1.0, torch.tensor(0.5))
    buffer.update(1.0, np.float32(1.5))
    counts = buffer.data[1]
    assert counts == [2, 3, 0.5, 1.5]
    assert [type(c) for c in counts] == [int, int, float, float]


def test_tensor_count_is_read_lazily_with_the_values():
    reads = []

    class Counted(torch.Tensor):
        def item(self):
            reads.append(1)
            return super().item()

    count = torch.tensor(5).as_subclass(Counted)
    buffer = HistoryBuffer()
    buffer.update(torch.tensor(10.0), count)
    assert reads == []  # nothing read while updating
    assert buffer.mean() == 2.0
    assert reads == [1]


def test_count_with_several_elements_is_rejected():
    buffer = HistoryBuffer()
    with pytest.raises(
        ValueError, match=r"count must have one element, got a ndarray of shape \(2,\)"
    ):
        buffer.update(1.0, np.array([1, 2]))
    with pytest.raises(
        ValueError, match=r"count must have one element, got a Tensor of shape \(3,\)"
    ):
        buffer.update(1.0, torch.ones(3))
    assert buffer.data == ([], [])


@pytest.mark.parametrize("count", ["2", None, [2], object()])
def test_non_number_counts_are_rejected(count):
    buffer = HistoryBuffer()
    with pytest.raises(
        TypeError,
        match=f"count must be an int, a float, or a tensor or array with one element, "
        f"got {type(count).__name__}",
    ):
        buffer.update(1.0, count)
    assert buffer.data == ([], [])


def test_array_holding_a_non_number_count_is_rejected():
    with pytest.raises(TypeError, match="count must be a number, got str: 'a'"):
        HistoryBuffer().update(1.0, np.array("a"))


def test_histories_of_other_shapes_are_rejected():
    with pytest.raises(
        ValueError, match=r"count_history must be one-dimensional, got a ndarray of shape \(\)"
    ):
        HistoryBuffer([1.0], np.array(1))
    with pytest.raises(TypeError, match=r"log_history must be a sequence .* got int: 3"):
        HistoryBuffer(3, [1])


def test_histories_of_unequal_length_name_both_lengths():
    with pytest.raises(ValueError, match="same length, got 3 values and 2 counts"):
        HistoryBuffer(np.zeros(3), np.ones(2, dtype=int))


def test_pickled_buffer_holds_plain_numbers():
    import pickle

    buffer = HistoryBuffer()
    buffer.update(torch.tensor(1.5), torch.tensor(2))
    copy = pickle.loads(pickle.dumps(buffer))
    assert copy.data == ([1.5], [2])
    assert [type(x) for x in copy.data[1]] == [int]


class _MMEngineBuffer:
    """The attributes an MMEngine 0.10 HistoryBuffer pickles."""

    def __init__(self) -> None:
        self.max_length = 3
        self._log_history = np.array([1.0, 2.0, 4.0, 8.0])
        self._count_history = np.array([1, 1, 2, 1])


def test_a_buffer_pickled_by_mmengine_unpickles_with_its_values():
    # Protocol 2 names the class as text: point it at treadle's class, as treadle-compat's
    # module alias does for a pickle of mmengine.logging.history_buffer.HistoryBuffer.
    data = pickle.dumps(_MMEngineBuffer(), protocol=2)
    name = f"c{__name__}\n_MMEngineBuffer\n".encode()
    assert name in data
    data = data.replace(name, b"ctreadle.logging.history_buffer\nHistoryBuffer\n")
    buffer = pickle.loads(data)
    assert isinstance(buffer, HistoryBuffer)
    assert buffer.max_length == 3
    assert buffer.data == ([2.0, 4.0, 8.0], [1, 2, 1])
    assert buffer.mean() == pytest.approx(14.0 / 4)
    buffer.update(16.0)
    assert buffer.current() == 16.0
