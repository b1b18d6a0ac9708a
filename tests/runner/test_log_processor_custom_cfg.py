"""custom_cfg as MMEngine takes it: an entry without ``method_name`` builds (with a warning) and
fails where MMEngine fails; a refused entry's error is also of MMEngine's exception type;
assigning ``custom_cfg`` checks it again."""

from __future__ import annotations

import itertools

import pytest
import torch
from log_processor_stub import fill_train, fill_val, stub_runner

from treadle.logging import MessageHub
from treadle.runner.log_processor import CustomCfgError, LogProcessor, WindowSizeError

_names = itertools.count()


def hub() -> MessageHub:
    h = MessageHub(f"log-processor-custom-cfg-{next(_names)}")
    fill_train(h, tensor=torch.tensor)
    fill_val(h)
    return h


def test_an_entry_without_method_name_builds_with_a_warning():
    with pytest.warns(
        UserWarning,
        match=r"LogProcessor custom_cfg\[0\] has no 'method_name': a log line that has 'loss' "
        r"will fail with a TypeError, as in MMEngine; an entry looks like dict\(data_src='loss'",
    ) as caught:
        processor = LogProcessor(custom_cfg=[dict(data_src="loss", window_size=100)])
    # The warning points at the code that built the processor.
    assert caught[0].filename == __file__
    assert processor.custom_cfg == [dict(data_src="loss", window_size=100)]


def test_an_entry_without_method_name_fails_where_its_scalar_is_logged():
    with pytest.warns(UserWarning, match="has no 'method_name'"):
        processor = LogProcessor(custom_cfg=[dict(data_src="loss", log_name="l")])
    runner = stub_runner(hub())
    with pytest.raises(
        TypeError,
        match=r"LogProcessor custom_cfg\[0\] \(data_src='loss'\) has no method_name, so it names "
        r"no statistic \(MMEngine: statistics\(\) missing 1 required positional argument: "
        r"'method_name'\); add method_name='mean'",
    ):
        processor.get_log_after_iter(runner, 9, "train")
    # Validation has no 'loss': its lines are written, as in MMEngine.
    _, line = processor.get_log_after_epoch(runner, 3, "val")
    assert line == "Epoch(val) [0][3/3]    time: 0.2000  data_time: 0.0200"


@pytest.mark.parametrize(
    ("kwargs", "types", "message"),
    [
        (
            dict(custom_cfg=[dict(window_size=3)]),
            (ValueError, AssertionError),
            r"custom_cfg\[0\] has no 'data_src': it holds \['window_size'\]",
        ),
        (
            dict(
                custom_cfg=[
                    dict(data_src="loss", log_name="loss_1"),
                    dict(data_src="loss", log_name="loss_1"),
                ]
            ),
            (ValueError, AssertionError),
            r"custom_cfg\[1\] writes 'loss_1', which custom_cfg\[0\] already writes",
        ),
        (
            dict(custom_cfg=[dict(data_src="loss"), dict(data_src="loss")]),
            (ValueError, AssertionError),
            r"\(found duplicate 'loss'\)",
        ),
        (
            dict(by_epoch=False, custom_cfg=[dict(data_src="loss", window_size="epoch")]),
            (ValueError, AssertionError),
            r"custom_cfg\[0\]: window_size cannot be epoch when by_epoch=False: there are no "
            r"epochs to average over",
        ),
    ],
    ids=["no data_src", "duplicate log_name", "written twice", "epoch by iteration"],
)
@pytest.mark.filterwarnings("ignore:LogProcessor custom_cfg.*has no 'method_name'")
def test_refused_entries_are_also_mmengines_exception(kwargs, types, message):
    # MMEngine asserts for these when built.
    for kind in types:
        with pytest.raises(kind, match=message):
            LogProcessor(**kwargs)


def test_mmengines_example_entries_build():
    processor = LogProcessor(
        custom_cfg=[
            dict(data_src="loss_cls", window_size=100, method_name="min"),
            dict(data_src="loss", log_name="loss_min", method_name="max"),
            dict(data_src="loss", log_name="loss_max", method_name="max"),
        ]
    )
    tag, _ = processor.get_log_after_iter(stub_runner(hub()), 9, "train")
    assert tag["loss_min"] == tag["loss_max"] == 12.0


def test_assigning_custom_cfg_checks_it_and_takes_effect():
    processor = LogProcessor()
    processor.custom_cfg = [dict(data_src="loss", log_name="top", method_name="max")]
    tag, line = processor.get_log_after_iter(stub_runner(hub()), 9, "train")
    assert tag["top"] == 12.0 and line.endswith("top: 12.0000")
    with pytest.raises(TypeError, match="custom_cfg must be a list of dicts, got dict"):
        processor.custom_cfg = dict(data_src="loss")
    assert processor.custom_cfg == [dict(data_src="loss", log_name="top", method_name="max")]
    processor.custom_cfg = None
    assert processor.custom_cfg == []


def test_the_error_classes_are_public():
    with pytest.raises(CustomCfgError):
        LogProcessor(custom_cfg=[dict(method_name="mean")])
    with pytest.warns(UserWarning, match="window_size='all' is none of an int"):
        processor = LogProcessor(
            custom_cfg=[dict(data_src="loss", method_name="mean", window_size="all")]
        )
    with pytest.raises(WindowSizeError):  # at the line, as MMEngine's TypeError
        processor.get_log_after_iter(stub_runner(hub()), 9, "train")
    assert issubclass(CustomCfgError, AssertionError) and issubclass(WindowSizeError, TypeError)
