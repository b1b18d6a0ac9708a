"""LogProcessor: the log line, its tag, window smoothing, custom_cfg and the errors it raises.

A stub runner (tests/support/log_processor_stub.py) holds a real treadle MessageHub.
"""

from __future__ import annotations

import itertools

import pytest
import torch
from log_processor_stub import fill_train, fill_val, stub_runner
from torch.utils._python_dispatch import TorchDispatchMode

from treadle.logging import HistoryBuffer, MessageHub
from treadle.runner.log_processor import LogProcessor, runner_view
from treadle.runner.registry import LOG_PROCESSORS

_names = itertools.count()


def hub() -> MessageHub:
    # Each test its own hub: MessageHub names are process-wide.
    return MessageHub(f"log-processor-test-{next(_names)}")


def train_hub(**kwargs) -> MessageHub:
    h = hub()
    fill_train(h, tensor=torch.tensor, **kwargs)
    return h


# -- the train line ------------------------------------------------------------------------------


def test_train_line_by_epoch_has_mmengine_format():
    tag, line = LogProcessor().get_log_after_iter(stub_runner(train_hub()), 9, "train")
    assert line == (
        "Epoch(train)  [1][  10/1563]  lr: 1.0000e-03  eta: 0:18:23  time: 0.1000  "
        "data_time: 0.0100  loss: 7.5000"
    )
    # Losses arrive as tensors and leave as Python numbers.
    assert tag == pytest.approx(
        {"lr": 0.001, "loss": 7.5, "time": 0.1, "data_time": 0.01, "epoch": 1, "iter": 10}
    )
    assert list(tag) == ["lr", "loss", "time", "data_time", "epoch", "iter"]
    assert all(type(v) in (int, float) for v in tag.values())


def test_train_line_by_iter():
    runner = stub_runner(train_hub(), iter=9, max_iters=1000)
    tag, line = LogProcessor(by_epoch=False).get_log_after_iter(runner, 3, "train")
    assert line.startswith("Iter(train) [  10/1000]  lr: 1.0000e-03  eta: 0:18:23  time:")
    assert "epoch" not in tag and tag["iter"] == 10


def test_epoch_is_right_aligned_to_max_epochs():
    processor = LogProcessor()
    _, nine = processor.get_log_after_iter(
        stub_runner(train_hub(), epoch=8, max_epochs=100), 9, "train"
    )
    _, ten = processor.get_log_after_iter(
        stub_runner(train_hub(), epoch=99, max_epochs=100), 9, "train"
    )
    assert nine.startswith("Epoch(train)   [9][  10/1563]")
    assert ten.startswith("Epoch(train) [100][  10/1563]")


def test_num_digits():
    _, line = LogProcessor(num_digits=2).get_log_after_iter(stub_runner(train_hub()), 9, "train")
    assert "lr: 1.00e-03  eta: 0:18:23  time: 0.10  data_time: 0.01  loss: 7.50" in line


def test_several_learning_rates_come_first():
    h = hub()
    for _ in range(2):
        h.update_scalar("train/loss", torch.tensor(1.0))
        h.update_scalar("train/generator.lr", 0.01)
        h.update_scalar("train/discriminator.lr", 0.0002)
    tag, line = LogProcessor().get_log_after_iter(stub_runner(h), 1, "train")
    assert line == (
        "Epoch(train)  [1][   2/1563]  generator.lr: 1.0000e-02 discriminator.lr: 2.0000e-04"
        "  loss: 1.0000"
    )
    assert tag["generator.lr"] == 0.01


def test_without_eta_times_are_ordinary_items():
    h = train_hub(eta=None)
    _, line = LogProcessor().get_log_after_iter(stub_runner(h), 9, "train")
    assert "eta" not in line
    assert line.endswith("loss: 7.5000  time: 0.1000  data_time: 0.0100")


def test_other_scalars_follow_in_the_order_logged():
    h = train_hub()
    h.update_scalar("train/loss_cls", torch.tensor(0.5))
    h.update_scalar("train/grad_norm", torch.tensor(3.0))
    h.update_scalar("train/accuracy", 0.75)
    _, line = LogProcessor().get_log_after_iter(stub_runner(h), 9, "train")
    assert line.endswith("loss: 7.5000  loss_cls: 0.5000  grad_norm: 3.0000  accuracy: 0.7500")


def test_memory_is_reported_on_an_accelerator(monkeypatch):
    seen = []
    # On an accelerator of any kind, device.get_max_memory answers (None on the CPU).
    monkeypatch.setattr(runner_view, "get_max_memory", lambda d: seen.append(d) or 392)
    runner = stub_runner(train_hub())
    runner.model.output_device = 1
    tag, line = LogProcessor().get_log_after_iter(runner, 9, "train")
    assert "data_time: 0.0100  memory: 392  loss: 7.5000" in line
    assert tag["memory"] == 392 and seen == [1]


def test_no_memory_on_cpu():
    tag, line = LogProcessor().get_log_after_iter(stub_runner(train_hub()), 9, "train")
    assert "memory" not in tag and "memory" not in line


# -- smoothing -----------------------------------------------------------------------------------


def test_losses_and_times_are_averaged_over_the_window_others_are_current():
    h = hub()
    for i in range(1, 21):
        h.update_scalar("train/loss", torch.tensor(float(i)))
        h.update_scalar("train/lr", float(i))
    tag, _ = LogProcessor(window_size=4).get_log_after_iter(stub_runner(h), 19, "train")
    assert tag["loss"] == pytest.approx((17 + 18 + 19 + 20) / 4)
    assert tag["lr"] == 20.0


def test_mean_pattern_chooses_what_is_averaged():
    h = hub()
    for i in range(1, 5):
        h.update_scalar("train/loss", float(i))
        h.update_scalar("train/acc", float(i))
    tag, _ = LogProcessor(mean_pattern=r"acc").get_log_after_iter(stub_runner(h), 3, "train")
    assert tag == pytest.approx({"loss": 4.0, "acc": 2.5, "epoch": 1, "iter": 10})


def test_losses_are_read_from_the_device_only_by_the_log_processor():
    class CountReads(TorchDispatchMode):
        reads = 0

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is torch.ops.aten._local_scalar_dense.default:
                CountReads.reads += 1
            return func(*args, **(kwargs or {}))

    h = hub()
    losses = [torch.tensor(float(i), requires_grad=True) * 2 for i in range(10)]
    with CountReads():
        for loss in losses:
            h.update_scalar("train/loss", loss)
        assert CountReads.reads == 0  # logging a step never waits for the device
        tag, _ = LogProcessor().get_log_after_iter(stub_runner(h), 9, "train")
    assert CountReads.reads > 0
    assert tag["loss"] == pytest.approx(9.0)


# -- custom_cfg ----------------------------------------------------------------------------------


def numbered_hub(n: int = 20) -> MessageHub:
    h = hub()
    for i in range(1, n + 1):
        h.update_scalar("train/loss", torch.tensor(float(i)))
    return h


def test_custom_cfg_adds_a_named_statistic_and_replaces_an_unnamed_one():
    processor = LogProcessor(
        window_size=2,
        custom_cfg=[
            dict(data_src="loss", log_name="loss_max", method_name="max"),
            dict(data_src="loss", method_name="min", window_size=5),
        ],
    )
    tag, line = processor.get_log_after_iter(stub_runner(numbered_hub()), 19, "train")
    assert tag["loss"] == 16.0 and tag["loss_max"] == 20.0
    assert line.endswith("loss: 16.0000  loss_max: 20.0000")


def test_custom_cfg_epoch_and_global_windows():
    processor = LogProcessor(
        custom_cfg=[
            dict(data_src="loss", log_name="loss_epoch", method_name="mean", window_size="epoch"),
            dict(data_src="loss", log_name="loss_all", method_name="mean", window_size="global"),
        ]
    )
    # 20 iterations so far in the run, the last 4 of them in this epoch.
    tag, _ = processor.get_log_after_iter(stub_runner(numbered_hub(), iter=19), 3, "train")
    assert tag["loss_epoch"] == pytest.approx((17 + 18 + 19 + 20) / 4)
    assert tag["loss_all"] == pytest.approx(10.5)


def test_custom_cfg_with_a_registered_statistic_and_extra_arguments():
    @HistoryBuffer.register_statistics
    def log_processor_test_last_sum(buffer, n=2):
        values, _ = buffer.data
        return sum(values[-n:])

    try:
        processor = LogProcessor(
            custom_cfg=[
                dict(data_src="loss", log_name="s", method_name="log_processor_test_last_sum", n=3)
            ]
        )
        tag, _ = processor.get_log_after_iter(stub_runner(numbered_hub()), 19, "train")
        assert tag["s"] == 18 + 19 + 20
    finally:
        # Statistics are registered process-wide: leave none behind for other tests.
        HistoryBuffer._statistics_methods.pop("log_processor_test_last_sum")


def test_custom_cfg_entry_for_a_missing_scalar_is_skipped():
    processor = LogProcessor(custom_cfg=[dict(data_src="top1", method_name="mean")])
    tag, _ = processor.get_log_after_iter(stub_runner(numbered_hub()), 19, "train")
    assert "top1" not in tag


def test_custom_cfg_from_a_config_builds_through_the_registry():
    from treadle.config import Config

    cfg = Config(
        dict(
            log_processor=dict(
                window_size=5,
                by_epoch=False,
                custom_cfg=[dict(data_src="loss", log_name="l", method_name="mean")],
            )
        )
    )
    processor = LOG_PROCESSORS.build(dict(type="LogProcessor", **cfg.log_processor))
    assert isinstance(processor, LogProcessor)
    assert (processor.window_size, processor.by_epoch) == (5, False)
    tag, _ = processor.get_log_after_iter(stub_runner(numbered_hub(), iter=19), 19, "train")
    assert tag["l"] == pytest.approx(10.5)


def test_an_unknown_log_processor_type_names_close_ones():
    with pytest.raises(KeyError, match=r"LogProcesor.*LogProcessor"):
        LOG_PROCESSORS.build(dict(type="LogProcesor"))


@pytest.mark.parametrize(
    ("custom_cfg", "error", "message"),
    [
        (dict(data_src="loss"), TypeError, "custom_cfg must be a list of dicts, got dict"),
        (["loss"], TypeError, r"custom_cfg\[0\] must be a dict such as"),
        ([dict(method_name="mean")], ValueError, r"custom_cfg\[0\] has no 'data_src'"),
        (
            [dict(data_src="loss", method_name="mean", log_name=["l"])],
            TypeError,
            "unhashable type: 'list'",
        ),
        (
            [
                dict(data_src="loss", method_name="mean", window_size=10),
                dict(data_src="loss", method_name="max", window_size=10),
            ],
            ValueError,
            r"custom_cfg\[1\] writes 'loss', which custom_cfg\[0\] already writes \(found "
            r"duplicate 'loss'\)",
        ),
    ],
)
def test_bad_custom_cfg_is_refused_when_built(custom_cfg, error, message):
    # What MMEngine refuses when built (the rest it builds: test_log_processor_leniency.py).
    with pytest.raises(error, match=message):
        LogProcessor(custom_cfg=custom_cfg)


def test_epoch_window_needs_by_epoch():
    cfg = [dict(data_src="loss", method_name="mean", window_size="epoch")]
    with pytest.raises(
        ValueError, match=r"custom_cfg\[0\]: window_size cannot be epoch when by_epoch=False"
    ):
        LogProcessor(by_epoch=False, custom_cfg=cfg)


def test_an_unknown_statistic_names_the_entry_and_the_registered_ones():
    processor = LogProcessor(custom_cfg=[dict(data_src="loss", method_name="median")])
    with pytest.raises(
        KeyError,
        match=r"custom_cfg\[0\] \(data_src='loss', method_name='median'"
        r"\).*registered: .*current.*mean",
    ):
        processor.get_log_after_iter(stub_runner(numbered_hub()), 19, "train")


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(mean_pattern="(loss"), ValueError, r"mean_pattern '\(loss' is not a regular"),
        (dict(mean_pattern=3), TypeError, r"mean_pattern 3 is not a regular expression: first"),
    ],
)
def test_bad_arguments(kwargs, error, message):
    # The rest MMEngine builds, and treadle too (test_log_processor_leniency.py).
    with pytest.raises(error, match=message):
        LogProcessor(**kwargs)


def test_bad_mode_names_the_modes():
    runner = stub_runner(train_hub())
    with pytest.raises(
        ValueError, match=r"mode must be one of \('train', 'val', 'test'\), got 'eval'"
    ):
        LogProcessor().get_log_after_iter(runner, 0, "eval")
    with pytest.raises(
        ValueError, match=r"get_log_after_epoch: mode must be one of \('val', 'test'\)"
    ):
        LogProcessor().get_log_after_epoch(runner, 0, "train")


# -- val and test --------------------------------------------------------------------------------


def val_hub() -> MessageHub:
    h = train_hub()
    fill_val(h)
    h.update_scalar("val/accuracy", 90.0)
    return h


def test_val_iter_line_and_its_timing_keys():
    tag, line = LogProcessor().get_log_after_iter(stub_runner(val_hub()), 1, "val")
    assert line == "Epoch(val)  [0][2/3]    eta: 0:18:23  time: 0.2000  data_time: 0.0200  "
    # Validation timings have keys of their own; the last epoch's metric is not in the line.
    assert list(tag) == ["val/time", "val/data_time", "accuracy", "epoch", "iter"]
    assert tag["val/time"] == pytest.approx(0.2)


def test_val_iter_line_shows_the_val_losses_of_earlier_validations():
    # MMEngine shows a val line's scalars whose name starts with 'val/loss': a val loss metric
    # ('val/val/loss' in the hub), the mean over the earlier validations.
    h = val_hub()
    for loss in (3.0, 1.0):
        h.update_scalar("val/val/loss", loss)
    h.update_scalar("val/val_loss_like", 5.0)  # does not start with 'val/loss'
    _, line = LogProcessor().get_log_after_iter(stub_runner(h), 1, "val")
    assert line == (
        "Epoch(val)  [0][2/3]    eta: 0:18:23  time: 0.2000  data_time: 0.0200  val/loss: 2.0000"
    )
    _, line = LogProcessor().get_log_after_iter(stub_runner(h), 1, "test")
    assert "loss" not in line


def test_val_without_training_shows_epoch_zero_with_a_space():
    runner = stub_runner(val_hub(), train_loop_built=False)
    tag, line = LogProcessor().get_log_after_iter(runner, 1, "val")
    assert line.startswith("Epoch(val) [0][2/3]    eta")
    assert tag["iter"] == 0 and tag["epoch"] == 0


def test_test_iter_line():
    h = hub()
    fill_val(h, 4, mode="test")
    h.update_info("eta", 3.0)
    tag, line = LogProcessor().get_log_after_iter(stub_runner(h), 2, "test")
    assert line == "Epoch(test) [3/4]    eta: 0:00:03  time: 0.2000  data_time: 0.0200  "
    assert list(tag) == ["test/time", "test/data_time", "iter"]
    _, line = LogProcessor(by_epoch=False).get_log_after_iter(stub_runner(h), 2, "test")
    assert line.startswith("Iter(test) [3/4]    eta")


def test_val_epoch_line_and_tag():
    runner = stub_runner(val_hub(), epoch=1)
    tag, line = LogProcessor().get_log_after_epoch(runner, 3, "val")
    assert line == "Epoch(val) [1][3/3]    accuracy: 90.0000  time: 0.2000  data_time: 0.0200"
    assert list(tag) == ["accuracy", "val/time", "val/data_time"]
    _, line = LogProcessor(by_epoch=False).get_log_after_epoch(runner, 3, "val")
    assert line.startswith("Iter(val) [3/3]    accuracy: 90.0000")


def test_val_epoch_times_cover_exactly_this_epoch():
    h = hub()
    fill_val(h, 3, time=10.0)  # an earlier validation, much slower
    fill_val(h, 3, time=0.2)
    # MMEngine's LoggerHook passes the loader's length as batch_idx: still only 3 values.
    tag, _ = LogProcessor().get_log_after_epoch(stub_runner(h), 3, "val")
    assert tag["val/time"] == pytest.approx(0.2)


def test_custom_cfg_may_choose_the_epoch_timing():
    h = hub()
    fill_val(h, 3, time=10.0)
    fill_val(h, 3, time=0.2)
    processor = LogProcessor(custom_cfg=[dict(data_src="time", method_name="max")])
    tag, _ = processor.get_log_after_epoch(stub_runner(h), 3, "val")
    assert tag["val/time"] == 10.0


def test_test_epoch_with_non_scalars():
    h = hub()
    fill_val(h, 4, mode="test")
    h.update_scalar("test/accuracy", 75.0)
    h.update_info("test/confusion", torch.eye(2))
    h.update_info("val/other", 1)  # another mode's information stays out
    runner = stub_runner(h)
    tag, line = LogProcessor().get_log_after_epoch(runner, 4, "test")
    assert line == (
        "Epoch(test) [4/4]    accuracy: 75.0000  confusion: \ntensor([[1., 0.],\n"
        "        [0., 1.]])\n  time: 0.2000  data_time: 0.0200"
    )
    assert list(tag) == ["accuracy", "test/time", "test/data_time"]
    tag, _ = LogProcessor().get_log_after_epoch(runner, 4, "test", with_non_scalar=True)
    assert list(tag) == ["accuracy", "confusion", "test/time", "test/data_time"]


def test_log_with_hierarchy_keeps_every_mode_prefix():
    processor = LogProcessor(log_with_hierarchy=True)
    runner = stub_runner(val_hub(), epoch=1)
    tag, line = processor.get_log_after_iter(runner, 9, "train")
    assert list(tag) == ["train/lr", "train/loss", "train/time", "train/data_time", "epoch", "iter"]
    assert "  lr: 1.0000e-03  eta" in line and "loss: 7.5000" in line
    tag, line = processor.get_log_after_epoch(runner, 3, "val")
    assert list(tag) == ["val/accuracy", "val/time", "val/data_time"]
    assert line == (
        "Epoch(val) [1][3/3]    val/accuracy: 90.0000  val/time: 0.2000  val/data_time: 0.0200"
    )


def test_mode_prefix_needs_its_separator():
    h = val_hub()
    h.update_scalar("validation_score", 1.0)
    h.update_scalar("trainer/x", 1.0)
    tag, _ = LogProcessor().get_log_after_epoch(stub_runner(h), 3, "val")
    assert "validation_score" not in tag and "idation_score" not in tag
    tag, _ = LogProcessor().get_log_after_iter(stub_runner(h), 9, "train")
    assert not any("x" in key for key in tag)


def test_a_loader_without_length():
    runner = stub_runner(val_hub(), val_len=None)
    _, line = LogProcessor().get_log_after_iter(runner, 1, "val")
    assert line.startswith("Epoch(val)  [0][2]    eta")
    tag, line = LogProcessor().get_log_after_epoch(runner, 3, "val")
    assert line.startswith("Epoch(val) [0][?]    accuracy")
    assert tag["val/time"] == pytest.approx(0.2)
