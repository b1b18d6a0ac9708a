"""The LogProcessor's part of the honest ETA: the val/test epoch line ends with how long the
pass took (IterTimerHook's runtime info ``val_time``/``test_time``), in the line only."""

from __future__ import annotations

import itertools

import pytest
from log_processor_stub import fill_train, fill_val, stub_runner

from treadle.logging import MessageHub
from treadle.runner.log_processor import LogProcessor
from treadle.runner.log_processor.line_format import format_pass_time

_names = itertools.count()


def _hub(mode: str = "val") -> MessageHub:
    h = MessageHub(f"log-processor-eta-test-{next(_names)}")
    fill_train(h)
    fill_val(h, mode=mode)
    h.update_scalar(f"{mode}/accuracy", 90.0)
    return h


@pytest.mark.parametrize("by_epoch", [True, False])
def test_val_epoch_line_ends_with_the_pass_time(by_epoch):
    h = _hub()
    h.update_info("val_time", 12.345, resumed=False)
    tag, line = LogProcessor(by_epoch=by_epoch).get_log_after_epoch(stub_runner(h), 3, "val")
    assert line.endswith("accuracy: 90.0000  time: 0.2000  data_time: 0.0200  val_time: 12.3s")
    # Not a scalar of the trackers' curves, with or without the non-scalars.
    assert "val_time" not in tag
    tag, _ = LogProcessor().get_log_after_epoch(stub_runner(h), 3, "val", with_non_scalar=True)
    assert not any("val_time" in key for key in tag)


def test_test_epoch_line_ends_with_the_test_time():
    h = _hub("test")
    h.update_info("test_time", 65.0, resumed=False)
    h.update_info("val_time", 1.0, resumed=False)  # another mode's: not this line's
    _, line = LogProcessor().get_log_after_epoch(stub_runner(h), 4, "test")
    assert line.endswith("data_time: 0.0200  test_time: 65.0s")
    assert "val_time" not in line


@pytest.mark.parametrize("value", [None, "missing"])
def test_no_pass_time_without_a_measure(value):
    # No IterTimerHook, or a pass it has not finished measuring: the line is MMEngine's.
    h = _hub()
    if value is None:
        h.update_info("val_time", None, resumed=False)
    _, line = LogProcessor().get_log_after_epoch(stub_runner(h, epoch=1), 3, "val")
    assert line == "Epoch(val) [1][3/3]    accuracy: 90.0000  time: 0.2000  data_time: 0.0200"


def test_format_pass_time():
    assert format_pass_time("val", 0.04) == "val_time: 0.04s"
    assert format_pass_time("val", 9.994) == "val_time: 9.99s"
    assert format_pass_time("test", 3600.0) == "test_time: 3600.0s"
