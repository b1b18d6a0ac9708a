"""Tensors logged as scalars are read only when the buffer is read (no device sync per step)."""

import pickle

import pytest

torch = pytest.importorskip("torch")

from treadle.logging import HistoryBuffer, MessageHub  # noqa: E402
from treadle.logging import history_buffer as history_buffer_module  # noqa: E402


class CountingTensor(torch.Tensor):
    """A tensor that counts how often it is read with item()."""

    item_calls = 0

    def item(self):
        CountingTensor.item_calls += 1
        return super().item()


def counting(value, **kwargs):
    return torch.tensor(value, **kwargs).as_subclass(CountingTensor)


@pytest.fixture(autouse=True)
def reset_count():
    CountingTensor.item_calls = 0


def test_update_does_not_read_the_tensor():
    buffer = HistoryBuffer()
    for value in (1.0, 2.0, 6.0):
        buffer.update(counting(value))
    assert CountingTensor.item_calls == 0
    assert buffer.mean() == 3.0
    calls_after_first_read = CountingTensor.item_calls
    assert buffer.max() == 6.0
    assert buffer.data == ([1.0, 2.0, 6.0], [1, 1, 1])
    assert CountingTensor.item_calls == calls_after_first_read  # each tensor is read once


def test_pending_tensors_are_stacked_and_read_in_one_batch(monkeypatch):
    # On a GPU, tensors are stacked and read with one sync; force that path on the CPU.
    monkeypatch.setattr(history_buffer_module, "READ_CPU_ONE_BY_ONE", False)
    buffer = HistoryBuffer()
    buffer.update(counting(1.0))
    buffer.update(counting([2.0]))  # shape (1,)
    buffer.update(4)  # plain numbers mix in
    buffer.update(torch.tensor([[3]]))  # int, shape (1, 1)
    buffer.update(torch.tensor(True))
    assert buffer.data == ([1.0, 2.0, 4, 3.0, 1.0], [1, 1, 1, 1, 1])
    assert CountingTensor.item_calls == 0
    assert all(type(v) in (int, float) for v in buffer.data[0])


def test_tensors_are_detached_from_the_graph():
    weights = torch.ones(3, requires_grad=True)
    loss = (weights * 2).sum()
    buffer = HistoryBuffer()
    buffer.update(loss)
    [stored] = buffer._values  # white box: what the buffer keeps alive until it is read
    assert stored.requires_grad is False
    assert stored.grad_fn is None
    loss.backward()  # the caller's graph is untouched
    assert buffer.current() == 6.0


def test_many_element_tensors_are_rejected():
    buffer = HistoryBuffer()
    with pytest.raises(ValueError, match=r"one element, got a Tensor of shape \(2, 3\)"):
        buffer.update(torch.zeros(2, 3))
    hub = MessageHub("train")
    with pytest.raises(
        ValueError,
        match=r"scalar 'loss': a logged value must have one element, got a Tensor of shape \(2,\)",
    ):
        hub.update_scalar("loss", torch.zeros(2))


def test_unread_tensors_are_bounded(monkeypatch):
    monkeypatch.setattr(history_buffer_module, "MAX_UNREAD", 4)
    buffer = HistoryBuffer()
    for value in range(3):
        buffer.update(counting(float(value)))
    assert CountingTensor.item_calls == 0
    buffer.update(counting(3.0))  # the fourth unread update reads the batch
    assert all(type(v) is float for v in buffer._values)
    assert buffer.mean() == 1.5


def test_pickled_buffers_hold_floats():
    buffer = HistoryBuffer()
    buffer.update(torch.tensor(0.5))
    buffer.update(torch.tensor(1.5, requires_grad=True))
    data = pickle.dumps(buffer)
    assert b"torch" not in data
    restored = pickle.loads(data)
    assert restored.data == ([0.5, 1.5], [1, 1])


def test_message_hub_keeps_tensors_lazy_and_saves_floats():
    hub = MessageHub("train")
    for step in range(4):
        hub.update_scalars(
            {"loss": counting(float(step)), "acc": {"value": counting(3.0), "count": 4}}
        )
    assert CountingTensor.item_calls == 0
    state = pickle.loads(pickle.dumps(hub.state_dict()))
    assert state["log_scalars"]["loss"].data == ([0.0, 1.0, 2.0, 3.0], [1, 1, 1, 1])
    restored = MessageHub("restored")
    restored.load_state_dict(state)
    assert restored.get_scalar("acc").mean() == 0.75


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_tensors_are_read_in_one_batch():
    buffer = HistoryBuffer()
    for value in range(10):
        buffer.update(counting(float(value), device="cuda"))
    buffer.update(torch.tensor(10.0))  # a CPU tensor among them
    assert CountingTensor.item_calls == 0
    assert buffer.data[0] == [float(v) for v in range(11)]
    assert CountingTensor.item_calls == 0  # stacked and read with tolist()
