"""HistoryBuffer.extend and MessageHub.extend_scalar: many values in one call, as if each had
been updated in turn."""

import pytest

from treadle.logging import HistoryBuffer, MessageHub
from treadle.logging import history_buffer as history_buffer_module


def test_extend_equals_updating_each_value():
    one_by_one, at_once = HistoryBuffer(max_length=4), HistoryBuffer(max_length=4)
    values = [1.0, 2, 3.5, 4.0, 5.0]
    for value in values:
        one_by_one.update(value, count=2)
    at_once.extend(values, count=2)
    assert at_once.data == one_by_one.data == ([2, 3.5, 4.0, 5.0], [2, 2, 2, 2])
    assert at_once.mean() == one_by_one.mean()


def test_extend_takes_any_iterable_and_nothing_is_a_no_op():
    buffer = HistoryBuffer()
    buffer.extend(iter([1.0, 2.0]))
    buffer.extend([])
    assert buffer.data == ([1.0, 2.0], [1, 1])


def test_extend_with_a_bad_value_stores_none_of_them():
    buffer = HistoryBuffer([1.0], [1])
    with pytest.raises(TypeError, match="a logged value must be an int, a float, or a tensor"):
        buffer.extend([2.0, "three", 4.0])
    assert buffer.data == ([1.0], [1])


def test_extend_with_a_bad_count_says_so():
    with pytest.raises(TypeError, match="count must be an int, a float, or a tensor"):
        HistoryBuffer().extend([1.0], count="2")


def test_message_hub_extend_scalar_creates_and_extends_a_key():
    hub = MessageHub("extend-new-key")
    hub.extend_scalar("train/time", [0.25, 0.5])
    hub.update_scalar("train/time", 0.75)
    hub.extend_scalar("train/time", (value for value in [1.0]))
    assert hub.get_scalar("train/time").data == ([0.25, 0.5, 0.75, 1.0], [1, 1, 1, 1])


def test_message_hub_extend_scalar_bad_value_names_the_key_and_leaves_no_trace():
    hub = MessageHub("extend-bad-value")
    with pytest.raises(TypeError, match="MessageHub 'extend-bad-value': scalar 'loss': a logged"):
        hub.extend_scalar("loss", [1.0, None])
    assert "loss" not in hub.log_scalars


def test_message_hub_extend_scalar_checks_count_and_resumed_even_without_values():
    hub = MessageHub("extend-checks")
    hub.update_scalar("lr", 0.1, resumed=False)
    with pytest.raises(ValueError, match="key 'lr' was first written with resumed=False"):
        hub.extend_scalar("lr", [], resumed=True)
    with pytest.raises(TypeError, match="the count of scalar 'lr' must be an int, got float"):
        hub.extend_scalar("lr", [0.1], count=1.5, resumed=False)
    hub.extend_scalar("lr", [0.2, 0.3], resumed=False)
    assert hub.get_scalar("lr").data[0] == [0.1, 0.2, 0.3]


def test_extend_keeps_tensors_unread_and_bounds_them(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(history_buffer_module, "MAX_UNREAD", 4)
    reads = []
    monkeypatch.setattr(
        history_buffer_module,
        "_to_floats",
        lambda tensors: reads.append(len(tensors)) or [float(tensor) for tensor in tensors],
    )
    buffer = HistoryBuffer()
    buffer.extend([torch.tensor(1.0), torch.tensor(2.0)])
    assert reads == []  # kept unread: no device sync when handed over
    buffer.extend([torch.tensor(3.0), 4.0])
    assert reads == [3]  # the fourth update read the three pending tensors at once
    assert buffer.data == ([1.0, 2.0, 3.0, 4.0], [1, 1, 1, 1])


def test_extend_detaches_tensors_and_refuses_many_elements():
    torch = pytest.importorskip("torch")
    weight = torch.ones((), requires_grad=True)
    buffer = HistoryBuffer()
    buffer.extend([weight * 2, torch.tensor([3.0])])
    assert buffer.data == ([2.0, 3.0], [1, 1])
    with pytest.raises(ValueError, match=r"must have one element, got a Tensor of shape \(2,\)"):
        buffer.extend([torch.tensor(1.0), torch.ones(2)])
    assert buffer.data == ([2.0, 3.0], [1, 1])
