"""LogProcessor builds with whatever MMEngine 0.10.7 builds with, and does what MMEngine does
with it, warning where it is suspicious: a window of 0 or below (MMEngine's numpy slice
``[-window_size:]``), a window or ``num_digits`` that fails at the first log line, ``custom_cfg``
entries whose ``data_src``/``log_name``/``method_name``/``window_size`` are not what they should
be. What MMEngine refuses when built is refused, with MMEngine's exception type too."""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Mapping

import pytest
import torch
from log_processor_stub import fill_val, stub_runner

from treadle.logging import MessageHub
from treadle.runner.log_processor import LogProcessor, WindowSizeError

_names = itertools.count()


def hub(n: int = 20) -> MessageHub:
    """Train losses 1..n (mean of the whole history: (n + 1) / 2), then a val pass."""
    h = MessageHub(f"log-processor-leniency-{next(_names)}")
    for i in range(1, n + 1):
        h.update_scalar("train/loss", torch.tensor(float(i)))
    fill_val(h)
    return h


def train_tag(processor: LogProcessor) -> dict:
    tag, _ = processor.get_log_after_iter(stub_runner(hub()), 19, "train")
    return tag


# -- window_size of the processor -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("window_size", "loss", "message"),
    [
        (0, 10.5, r"window_size=0 means the whole history \(MMEngine's numpy slice \[-0:\]\)"),
        (-15, 18.0, r"window_size=-15 means every value but the first 15 \(MMEngine's numpy "),
        (True, 20.0, r"LogProcessor window_size=True is read as the int 1"),
        (False, 10.5, r"LogProcessor window_size=False is read as the int 0"),
    ],
)
def test_windows_of_zero_or_below_build_with_a_warning_and_slice_as_mmengine(
    window_size, loss, message
):
    with pytest.warns(UserWarning, match=message) as records:
        processor = LogProcessor(window_size=window_size)
    assert records[0].filename == __file__  # points at the line that built it
    assert processor.window_size is window_size  # kept as given, as MMEngine keeps it
    with warnings.catch_warnings(record=True) as read:
        warnings.simplefilter("always")
        assert train_tag(processor)["loss"] == loss
    # 0 and bools are read as their window silently; a negative window is the buffer's to warn.
    assert [str(w.message)[:18] for w in read] == (
        ["window_size=-15 me"] if window_size == -15 else []
    )


def test_window_none_is_the_whole_history_without_a_warning(recwarn):
    processor = LogProcessor(window_size=None)
    assert train_tag(processor)["loss"] == 10.5
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("window_size", ["10", 1.5])
def test_a_window_that_is_no_int_fails_at_the_line_with_mmengines_assertion(window_size):
    with pytest.warns(UserWarning, match=rf"window_size={window_size!r} is not an int: every "):
        processor = LogProcessor(window_size=window_size)
    with pytest.raises(AssertionError, match="The type of window size should be int") as info:
        train_tag(processor)
    assert isinstance(info.value, TypeError)
    # A val epoch line averages its times over the epoch: it is written, as in MMEngine.
    _, line = processor.get_log_after_epoch(stub_runner(hub()), 3, "val")
    assert line == "Epoch(val) [0][3/3]    time: 0.2000  data_time: 0.0200"


# -- num_digits and mean_pattern ------------------------------------------------------------------


@pytest.mark.parametrize("num_digits", [-1, None, 2.0, True])
def test_num_digits_that_cannot_format_builds_and_fails_at_the_line(num_digits):
    with pytest.warns(UserWarning, match=rf"num_digits={num_digits!r} is not an int >= 0"):
        processor = LogProcessor(num_digits=num_digits)
    with pytest.raises(ValueError, match=r"[Ff]ormat specifier"):
        processor.get_log_after_iter(stub_runner(hub()), 19, "train")


@pytest.mark.parametrize(
    ("pattern", "message"),
    [("(loss", r"mean_pattern '\(loss' is not a regular expression: missing \)"), (3, "first")],
)
def test_a_bad_mean_pattern_is_mmengines_re_error_and_type_error(pattern, message):
    with pytest.raises(re.error, match=message) as info:
        LogProcessor(mean_pattern=pattern)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)


def test_a_compiled_mean_pattern_is_taken():
    processor = LogProcessor(mean_pattern=re.compile("nothing"))
    assert train_tag(processor)["loss"] == 20.0  # the latest, not a mean


# -- custom_cfg entries ---------------------------------------------------------------------------


def test_a_data_src_that_is_no_str_matches_nothing():
    cfg = [dict(data_src=1, method_name="mean")]
    with pytest.warns(
        UserWarning,
        match=r"LogProcessor custom_cfg\[0\]: data_src=1 is not a str: it names no logged "
        r"scalar, so the entry adds nothing to the line; an entry looks like",
    ):
        processor = LogProcessor(custom_cfg=cfg)
    assert train_tag(processor) == train_tag(LogProcessor())
    _, line = processor.get_log_after_epoch(stub_runner(hub()), 3, "val")
    assert line == "Epoch(val) [0][3/3]    time: 0.2000  data_time: 0.0200"


def test_a_log_name_that_is_no_str_is_written_as_its_str():
    cfg = [dict(data_src="loss", log_name=2, method_name="max")]
    with pytest.warns(UserWarning, match=r"log_name=2 is not a str: the line names it '2'"):
        processor = LogProcessor(custom_cfg=cfg)
    tag, line = processor.get_log_after_iter(stub_runner(hub()), 19, "train")
    assert tag["2"] == 20.0 and line.endswith("2: 20.0000")


def test_a_method_name_that_is_no_str_fails_at_the_line_with_a_key_error():
    cfg = [dict(data_src="loss", method_name=3)]
    with pytest.warns(UserWarning, match=r"method_name=3 is not a str, so it names no statistic"):
        processor = LogProcessor(custom_cfg=cfg)
    with pytest.raises(KeyError, match=r"no HistoryBuffer statistic named 3"):
        processor.get_log_after_iter(stub_runner(hub()), 19, "train")
    # Lines without 'loss' are written, as in MMEngine.
    processor.get_log_after_epoch(stub_runner(hub()), 3, "val")


@pytest.mark.parametrize("window_size", ["all", 1.5, [3]])
def test_an_entry_window_that_is_no_window_fails_at_every_line(window_size):
    cfg = [dict(data_src="loss", method_name="mean", window_size=window_size)]
    with pytest.warns(UserWarning, match=r"is none of an int, 'epoch' or 'global': every log"):
        processor = LogProcessor(custom_cfg=cfg)
    message = r"custom_cfg\[0\]: window_size should be int, epoch or global"
    with pytest.raises(WindowSizeError, match=message) as info:
        processor.get_log_after_iter(stub_runner(hub()), 19, "train")
    assert isinstance(info.value, TypeError)
    # MMEngine resolves every entry's window at every line, whatever its data_src.
    with pytest.raises(TypeError, match=message):
        processor.get_log_after_epoch(stub_runner(hub()), 3, "val")


@pytest.mark.parametrize(
    ("window_size", "lowest", "message"),
    [
        (0, 1.0, r"custom_cfg\[0\]: window_size=0 means the whole history"),
        (-16, 17.0, r"custom_cfg\[0\]: window_size=-16 means every value but the first 16"),
        (True, 20.0, r"custom_cfg\[0\]: window_size=True is read as the int 1"),
    ],
)
def test_entry_windows_of_zero_or_below_slice_as_mmengine(window_size, lowest, message):
    cfg = [dict(data_src="loss", log_name="lowest", method_name="min", window_size=window_size)]
    with pytest.warns(UserWarning, match=message):
        processor = LogProcessor(custom_cfg=cfg)
    # The statistic gets the window as written (MMEngine's); the buffer warns when it reads it.
    with pytest.warns(UserWarning, match=r"MMEngine's (numpy slice|buffer reads a bool)"):
        assert train_tag(processor)["lowest"] == lowest


class Entry(Mapping):
    """A mapping that is no dict (a config object reads as one)."""

    def __init__(self, **items):
        self._items = items

    def __getitem__(self, key):
        return self._items[key]

    def __iter__(self):
        return iter(self._items)

    def __len__(self):
        return len(self._items)


def test_an_entry_may_be_any_mapping():
    processor = LogProcessor(custom_cfg=[Entry(data_src="loss", log_name="top", method_name="max")])
    assert train_tag(processor)["top"] == 20.0


@pytest.mark.parametrize(
    ("custom_cfg", "message"),
    [
        (dict(data_src="loss"), "custom_cfg must be a list of dicts, got dict"),
        ([5], r"custom_cfg\[0\] must be a dict such as dict\(data_src='loss'"),
        (["loss"], r"custom_cfg\[0\] must be a dict such as"),
    ],
)
def test_what_mmengine_refuses_when_built_is_refused_as_its_assertion_too(custom_cfg, message):
    with pytest.raises(TypeError, match=message) as info:
        LogProcessor(custom_cfg=custom_cfg)
    assert isinstance(info.value, AssertionError)


# -- runner.iter is read only for a 'global' window -----------------------------------------------


class CountingRunner:
    """A stub runner that counts reads of ``iter`` (MMEngine's Runner.iter builds the train
    loop, so a line that reads it in a run that only validates would build one)."""

    def __init__(self, runner):
        self.__dict__["_runner"] = runner
        self.__dict__["iter_reads"] = 0

    def __getattr__(self, name):
        if name == "iter":
            self.__dict__["iter_reads"] += 1
        return getattr(self._runner, name)


@pytest.mark.parametrize("mode", ["val", "test"])
def test_val_and_test_lines_do_not_read_runner_iter(mode):
    h = hub()
    fill_val(h, mode="test")
    runner = CountingRunner(stub_runner(h, train_loop_built=False))
    processor = LogProcessor(
        custom_cfg=[dict(data_src="loss", log_name="e", method_name="mean", window_size="epoch")]
    )
    processor.get_log_after_iter(runner, 2, mode)
    processor.get_log_after_epoch(runner, 3, mode)
    assert runner.iter_reads == 0


def test_a_global_window_reads_runner_iter():
    runner = CountingRunner(stub_runner(hub(), iter=19))
    processor = LogProcessor(
        custom_cfg=[dict(data_src="loss", log_name="g", method_name="mean", window_size="global")]
    )
    tag, _ = processor.get_log_after_iter(runner, 19, "train")
    assert tag["g"] == 10.5 and runner.iter_reads >= 1


@pytest.mark.parametrize("stage", ["val", "test"])
def test_runner_val_and_test_leave_the_train_loop_unbuilt(tmp_path, stage):
    # MMEngine's test_val/test_test: the train loop stays the config dict after val()/test().
    from runner_toy_model import toy_cfg

    from treadle.runner.runner import Runner

    runner = Runner(**toy_cfg(tmp_path, param_scheduler=None))
    getattr(runner, stage)()
    assert isinstance(runner._train_loop, dict)
