"""treadle's LogProcessor against MMEngine 0.10's: fed the same message hub contents and the same
runner, both write the same lines and the same tags, except the deliberate differences asserted
as such below.

Runs only where mmengine is installed: ``hatch run mmengine:pytest``.
"""

from __future__ import annotations

import itertools
import warnings

import pytest

mm_logging = pytest.importorskip("mmengine.logging")
mm_runner = pytest.importorskip("mmengine.runner")

import torch  # noqa: E402
from log_processor_stub import fill_train, fill_val, stub_runner  # noqa: E402

from treadle.logging import MessageHub  # noqa: E402
from treadle.runner.log_processor import LogProcessor  # noqa: E402

_names = itertools.count()

CONFIGS = [
    {},
    dict(by_epoch=False),
    dict(log_with_hierarchy=True),
    dict(window_size=3, num_digits=2),
    dict(
        custom_cfg=[
            dict(data_src="loss", method_name="mean", window_size="global"),
            dict(data_src="loss", log_name="loss_max", method_name="max", window_size=3),
            dict(data_src="loss", log_name="loss_epoch", method_name="mean", window_size="epoch"),
        ]
    ),
    dict(custom_cfg=[dict(data_src="time", method_name="max")]),
]
CONFIGS_BY_ITER = [
    dict(
        by_epoch=False,
        custom_cfg=[dict(data_src="loss", log_name="g", method_name="min", window_size=5)],
    )
]


def filled(hub_type):
    hub = hub_type(f"parity-log-processor-{next(_names)}")
    fill_train(hub, 25, tensor=torch.tensor)
    hub.update_scalar("train/loss_cls", torch.tensor(0.25))
    hub.update_scalar("train/grad_norm", torch.tensor(2.0))
    fill_val(hub, 3)
    hub.update_scalar("val/accuracy", 91.25)
    hub.update_info("val/cm", torch.eye(2))
    fill_val(hub, 4, mode="test")
    hub.update_scalar("test/accuracy", 80.0)
    hub.update_info("test/table", torch.arange(3))
    return hub


def calls(processor, runner):
    """Every way a LoggerHook asks for a line, with MMEngine's arguments."""
    return [
        processor.get_log_after_iter(runner, 9, "train"),
        processor.get_log_after_iter(runner, 1, "val"),
        processor.get_log_after_iter(runner, 2, "test"),
        processor.get_log_after_epoch(runner, 3, "val"),
        processor.get_log_after_epoch(runner, 3, "val", with_non_scalar=True),
        processor.get_log_after_epoch(runner, 4, "test", with_non_scalar=True),
    ]


def run_both(kwargs, **runner_kwargs):
    mm = calls(
        mm_runner.LogProcessor(**kwargs),
        stub_runner(filled(mm_logging.MessageHub), **runner_kwargs),
    )
    tr = calls(LogProcessor(**kwargs), stub_runner(filled(MessageHub), **runner_kwargs))
    return mm, tr


def treadle_key(key, tag):
    """treadle's name of an MMEngine tag key: val and test timings carry their mode."""
    if key in tag:
        return key
    for mode in ("val", "test"):
        if f"{mode}/{key}" in tag:
            return f"{mode}/{key}"
    raise AssertionError(f"{key!r} missing from treadle's tag {list(tag)}")


def assert_same(mm_result, tr_result):
    (mm_tag, mm_line), (tr_tag, tr_line) = mm_result, tr_result
    assert tr_line == mm_line
    assert [treadle_key(k, tr_tag) for k in mm_tag] == list(tr_tag)
    for key, value in mm_tag.items():
        mine = tr_tag[treadle_key(key, tr_tag)]
        if isinstance(value, torch.Tensor):
            assert torch.equal(value, mine)
        else:
            assert mine == pytest.approx(float(value), rel=1e-12, abs=1e-12), key
            assert type(mine) in (int, float)


@pytest.mark.parametrize("kwargs", CONFIGS + CONFIGS_BY_ITER, ids=repr)
@pytest.mark.parametrize("epoch", [0, 9])
def test_same_lines_and_tags(kwargs, epoch):
    mm, tr = run_both(kwargs, epoch=epoch, iter=9)
    for mm_result, tr_result in zip(mm, tr, strict=True):
        assert_same(mm_result, tr_result)


def test_val_and_test_timing_keys_carry_their_mode():
    # Deliberate difference: MMEngine's val tags say 'time' like the train tags, so a plot of
    # scalars.json draws validation steps into the training time curve.
    mm, tr = run_both({})
    assert "time" in mm[3][0] and "time" in mm[0][0]
    assert "val/time" in tr[3][0] and "time" not in tr[3][0]
    assert "test/data_time" in tr[5][0] and "data_time" not in tr[5][0]
    assert "time" in tr[0][0]  # training keeps MMEngine's key


def test_validation_without_training_has_a_space_after_the_mode():
    # Deliberate difference: MMEngine writes "Epoch(val)[0][2/3]" when no train loop exists.
    mm, tr = run_both({}, train_loop_built=False)
    assert mm[1][1].startswith("Epoch(val)[0][2/3]    eta")
    assert tr[1][1].startswith("Epoch(val) [0][2/3]    eta")
    for mm_result, tr_result in zip(mm[3:], tr[3:], strict=True):
        assert_same(mm_result, tr_result)


def test_epoch_times_exclude_the_previous_validation():
    # Deliberate difference: MMEngine averages len(loader) + 1 values, one of them from the
    # previous validation; treadle averages exactly this epoch's.
    def second_validation(hub):
        fill_val(hub, 3, time=10.0)
        fill_val(hub, 3, time=0.2)
        return stub_runner(hub)

    mm_tag, _ = mm_runner.LogProcessor().get_log_after_epoch(
        second_validation(mm_logging.MessageHub(f"parity-log-processor-{next(_names)}")), 3, "val"
    )
    tr_tag, _ = LogProcessor().get_log_after_epoch(
        second_validation(MessageHub(f"parity-log-processor-{next(_names)}")), 3, "val"
    )
    assert mm_tag["time"] == pytest.approx((10.0 + 3 * 0.2) / 4)
    assert tr_tag["val/time"] == pytest.approx(0.2)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(custom_cfg=[dict(method_name="mean")]),
        dict(
            custom_cfg=[
                dict(data_src="loss", method_name="mean"),
                dict(data_src="loss", method_name="max"),
            ]
        ),
        dict(
            by_epoch=False,
            custom_cfg=[dict(data_src="loss", method_name="mean", window_size="epoch")],
        ),
    ],
    ids=["no data_src", "written twice", "epoch window by iteration"],
)
def test_bad_custom_cfg_is_a_value_error_and_an_assertion(kwargs):
    # MMEngine asserts (and asserts vanish under python -O); treadle's error is both.
    with pytest.raises(AssertionError):
        mm_runner.LogProcessor(**kwargs)
    with pytest.raises(AssertionError, match=r"LogProcessor custom_cfg\[\d\]") as caught:
        LogProcessor(**kwargs)
    assert isinstance(caught.value, ValueError)


def test_a_bad_window_builds_and_fails_at_the_first_log():
    # As MMEngine: window_size='all' builds (treadle warns) and fails at the first log line.
    cfg = [dict(data_src="loss", method_name="mean", window_size="all")]
    processor = mm_runner.LogProcessor(custom_cfg=cfg)
    with pytest.raises(TypeError, match="window_size should be int"):
        processor.get_log_after_iter(stub_runner(filled(mm_logging.MessageHub)), 9, "train")
    with pytest.warns(UserWarning, match=r"custom_cfg\[0\]: window_size='all' is none of"):
        processor = LogProcessor(custom_cfg=cfg)
    with pytest.raises(TypeError, match=r"custom_cfg\[0\]: window_size should be int"):
        processor.get_log_after_iter(stub_runner(filled(MessageHub)), 9, "train")


@pytest.mark.parametrize("window_size", [0, -3, True])
def test_windows_of_zero_or_below_give_mmengines_means(window_size):
    # MMEngine slices its numpy history [-window_size:]: 0 is the whole history.
    mm_tag, mm_line = mm_runner.LogProcessor(window_size=window_size).get_log_after_iter(
        stub_runner(filled(mm_logging.MessageHub)), 9, "train"
    )
    with pytest.warns(UserWarning, match="LogProcessor window_size"):
        processor = LogProcessor(window_size=window_size)
    with warnings.catch_warnings():
        # A negative window wider than a short history: nan, as MMEngine (numpy warns too).
        warnings.simplefilter("ignore")
        tag, line = processor.get_log_after_iter(stub_runner(filled(MessageHub)), 9, "train")
    assert line == mm_line

    def nan_as_text(values):
        return {key: "nan" if value != value else value for key, value in values.items()}

    assert nan_as_text(tag) == nan_as_text(mm_tag)


def test_an_entry_without_method_name_builds_and_fails_at_the_line():
    cfg = [dict(data_src="loss", log_name="l", window_size=3)]
    processor = mm_runner.LogProcessor(custom_cfg=cfg)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'method_name'"):
        processor.get_log_after_iter(stub_runner(filled(mm_logging.MessageHub)), 9, "train")
    with pytest.warns(UserWarning, match=r"custom_cfg\[0\] has no 'method_name'"):
        processor = LogProcessor(custom_cfg=cfg)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'method_name'"):
        processor.get_log_after_iter(stub_runner(filled(MessageHub)), 9, "train")


def test_an_entry_without_window_by_iteration():
    # Deliberate difference: MMEngine fails with KeyError('window_size') when by_epoch=False and
    # an entry has no window_size; treadle takes the statistic over the whole history.
    cfg = [dict(data_src="loss", log_name="lowest", method_name="min")]
    with pytest.raises(KeyError, match="window_size"):
        mm_runner.LogProcessor(by_epoch=False, custom_cfg=cfg)
    tag, line = LogProcessor(by_epoch=False, custom_cfg=cfg).get_log_after_iter(
        stub_runner(filled(MessageHub)), 9, "train"
    )
    assert tag["lowest"] == 1.0 and line.endswith("lowest: 1.0000")
