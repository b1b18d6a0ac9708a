"""A message hub's HistoryBuffers keep MMEngine's array dtypes (int64 or float64, which decide how
their mean sums) through treadle's checkpoints and through checkpoints MMEngine wrote."""

from __future__ import annotations

import numpy as np

from treadle.logging import HistoryBuffer
from treadle.runner.runner.checkpoint_contents import (
    history_buffer_to_plain,
    plain_to_history_buffer,
)
from treadle.runner.runner.mmengine_migration import LegacyHistoryBuffer


def test_a_float64_history_of_whole_numbers_comes_back_float64():
    buffer = HistoryBuffer()  # MMEngine's hub buffers: float64, whatever is logged
    for value in (3, 4, 2**53 + 1):
        buffer.update(value)
    plain = history_buffer_to_plain(buffer)
    assert plain["dtypes"] == ["float64", "float64"]
    restored = plain_to_history_buffer(plain)
    assert restored.dtypes == ("float64", "float64")
    assert restored.mean() == buffer.mean()
    assert type(restored.current()) is float


def test_an_int64_history_comes_back_int64():
    buffer = HistoryBuffer([2**53 + 1, 1, 2], [1, 1, 1])
    restored = plain_to_history_buffer(history_buffer_to_plain(buffer))
    assert restored.dtypes == ("int64", "int64")
    assert restored.mean() == buffer.mean() == float(2**53 + 4) / 3.0
    assert type(restored.current()) is int


def test_a_checkpoint_without_dtypes_holds_float64_histories():
    # treadle 0.1.0's checkpoints: the hub's buffers, all built empty.
    plain = history_buffer_to_plain(HistoryBuffer([1, 2], [1, 1]))
    del plain["dtypes"]
    assert plain_to_history_buffer(plain).dtypes == ("float64", "float64")


def test_a_buffer_mmengine_pickled_keeps_its_dtypes():
    legacy = LegacyHistoryBuffer()
    legacy.__dict__.update(
        _log_history=np.array([2**53 + 1, 1, 2]), _count_history=np.ones(3), max_length=10
    )
    buffer = legacy.to_history_buffer()
    assert buffer.dtypes == ("int64", "float64")
    expected = np.array([2**53 + 1, 1, 2]).sum() / np.ones(3).sum()
    assert buffer.mean() == expected
