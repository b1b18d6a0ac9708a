"""The log line goes through MMEngine's steps: a toolbox subclass (or a test) that overrides
``_collect_scalars``, ``_parse_windows_size``, ``_get_iter``, ``_get_epoch``, ``_get_cur_loop``,
``_collect_non_scalars`` or ``_get_max_memory`` changes the line as it would MMEngine's."""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from unittest.mock import MagicMock, patch

import pytest
import torch
from log_processor_stub import Batches, fill_train, fill_val, stub_runner

from treadle.logging import MessageHub
from treadle.runner.log_processor import LogProcessor, runner_view

_names = itertools.count()


def full_hub() -> MessageHub:
    hub = MessageHub(f"log-processor-overrides-{next(_names)}")
    fill_train(hub, 25, tensor=torch.tensor)
    hub.update_scalar("train/loss_cls", torch.tensor(0.25))
    fill_val(hub, 3)
    hub.update_scalar("val/accuracy", 91.25)
    hub.update_info("val/cm", torch.eye(2))
    fill_val(hub, 4, mode="test")
    hub.update_scalar("test/accuracy", 80.0)
    return hub


def every_line(processor, runner):
    return [
        processor.get_log_after_iter(runner, 9, "train"),
        processor.get_log_after_iter(runner, 1, "val"),
        processor.get_log_after_iter(runner, 2, "test"),
        processor.get_log_after_epoch(runner, 3, "val", with_non_scalar=True),
        processor.get_log_after_epoch(runner, 4, "test"),
    ]


class PassCollect(LogProcessor):
    def _collect_scalars(self, custom_cfg, runner, mode, reserve_prefix=False):
        return super()._collect_scalars(custom_cfg, runner, mode, reserve_prefix)


class PassParse(LogProcessor):
    def _parse_windows_size(self, runner, batch_idx, custom_cfg=None):
        return super()._parse_windows_size(runner, batch_idx, custom_cfg)


CONFIGS = [
    {},
    dict(by_epoch=False),
    dict(log_with_hierarchy=True),
    dict(
        custom_cfg=[
            dict(data_src="loss", method_name="mean", window_size="global"),
            dict(data_src="loss", log_name="loss_max", method_name="max", window_size=3),
            dict(data_src="loss", log_name="loss_epoch", method_name="mean", window_size="epoch"),
            dict(data_src="time", method_name="max"),
        ],
        log_with_hierarchy=True,
    ),
]


@pytest.mark.parametrize("kwargs", CONFIGS, ids=repr)
@pytest.mark.parametrize("subclass", [PassCollect, PassParse])
def test_mmengine_steps_give_treadles_lines(subclass, kwargs):
    # The same lines and tags whether the line takes treadle's path or MMEngine's steps.
    runner = stub_runner(full_hub(), epoch=3, iter=24)
    expected = every_line(LogProcessor(**kwargs), runner)
    assert every_line(subclass(**kwargs), runner) == expected


def test_a_subclass_collect_scalars_changes_the_line():
    class WithGpuTemp(LogProcessor):
        def _collect_scalars(self, custom_cfg, runner, mode, reserve_prefix=False):
            tag = super()._collect_scalars(custom_cfg, runner, mode, reserve_prefix)
            if mode == "train":
                tag[f"{'train/' if reserve_prefix else ''}gpu_temp"] = 71.0
            return tag

    tag, line = WithGpuTemp().get_log_after_iter(stub_runner(full_hub()), 9, "train")
    assert line.endswith("loss: 20.5000  loss_cls: 0.2500  gpu_temp: 71.0000")
    assert tag["gpu_temp"] == 71.0
    tag, _ = WithGpuTemp(log_with_hierarchy=True).get_log_after_iter(
        stub_runner(full_hub()), 9, "train"
    )
    assert tag["train/gpu_temp"] == 71.0


def test_collect_scalars_replaced_on_the_instance_or_the_class():
    runner = stub_runner(full_hub())
    processor = LogProcessor()
    processor._collect_scalars = lambda *args: {"lr": 0.1, "loss_x": 2.0}
    _, line = processor.get_log_after_iter(runner, 9, "train")
    assert line == "Epoch(train)  [1][  10/1563]  lr: 1.0000e-01  loss_x: 2.0000"
    with patch.object(LogProcessor, "_collect_scalars", MagicMock(return_value={"acc": 0.5})):
        _, line = LogProcessor().get_log_after_epoch(runner, 3, "val")
    matrix = "\ntensor([[1., 0.],\n        [0., 1.]])\n"
    assert line == f"Epoch(val) [0][3/3]    acc: 0.5000  cm: {matrix}"
    # Back to treadle's own path once the patch is gone.
    _, line = LogProcessor().get_log_after_epoch(runner, 3, "val")
    assert line.startswith("Epoch(val) [0][3/3]    accuracy: 91.2500")


def test_collect_scalars_gets_mmengines_arguments():
    seen = []

    def collect(custom_cfg, runner, mode, *rest):
        seen.append((custom_cfg, mode, rest))
        return {"time": 1.0, "data_time": 1.0}

    processor = LogProcessor(
        log_with_hierarchy=True,
        custom_cfg=[dict(data_src="loss", log_name="e", method_name="mean", window_size="epoch")],
    )
    processor._collect_scalars = collect
    processor.get_log_after_iter(stub_runner(full_hub()), 4, "train")
    processor.get_log_after_epoch(stub_runner(full_hub()), 3, "val")
    e = dict(data_src="loss", log_name="e", method_name="mean")
    assert seen == [
        ([{**e, "window_size": 5}], "train", ()),
        ([{**e, "window_size": 5}], "train", (True,)),
        (
            [
                {**e, "window_size": 3},
                dict(data_src="time", window_size=3, method_name="mean"),
                dict(data_src="data_time", window_size=3, method_name="mean"),
            ],
            "val",
            (True,),
        ),
    ]


def test_a_subclass_parse_windows_size_changes_the_statistic():
    class LongEpochs(LogProcessor):
        def _parse_windows_size(self, runner, batch_idx, custom_cfg=None):
            parsed = super()._parse_windows_size(runner, batch_idx, custom_cfg)
            for entry in parsed:
                if entry.get("log_name") == "loss_epoch":
                    entry["window_size"] = 20
            return parsed

    cfg = [dict(data_src="loss", log_name="loss_epoch", method_name="mean", window_size="epoch")]
    runner = stub_runner(full_hub())
    tag, _ = LogProcessor(custom_cfg=cfg).get_log_after_iter(runner, 1, "train")
    assert tag["loss_epoch"] == 24.5  # the last 2 losses: 24, 25
    tag, _ = LongEpochs(custom_cfg=cfg).get_log_after_iter(runner, 1, "train")
    assert tag["loss_epoch"] == 15.5  # the last 20: 6 ... 25


def test_header_steps_can_be_overridden():
    class Shifted(LogProcessor):
        def _get_iter(self, runner, batch_idx=None):
            return super()._get_iter(runner, batch_idx) * 100

        def _get_epoch(self, runner, mode):
            return 7

        def _get_cur_loop(self, runner, mode):
            return SimpleNamespace(dataloader=Batches(5000))

    runner = stub_runner(full_hub())
    tag, line = Shifted().get_log_after_iter(runner, 9, "train")
    assert line.startswith("Epoch(train)  [7][1000/5000]  lr:")
    assert tag["epoch"] == 7
    _, line = Shifted(by_epoch=False).get_log_after_iter(runner, 9, "train")
    assert line.startswith("Iter(train) [1000/1000]  lr:")
    _, line = Shifted().get_log_after_epoch(runner, 3, "val")
    assert line.startswith("Epoch(val) [7][5000/5000]    accuracy")


def test_collect_non_scalars_override_reaches_the_epoch_line():
    processor = LogProcessor()
    processor._collect_non_scalars = lambda runner, mode: {"recall": {"cat": 1}}
    tag, line = processor.get_log_after_epoch(stub_runner(full_hub()), 3, "val", True)
    assert "accuracy: 91.2500  recall: {'cat': 1}  time: 0.2000" in line
    assert tag["recall"] == {"cat": 1}


@pytest.mark.parametrize("accelerator", [True, False])
def test_get_max_memory_override_is_asked_where_an_accelerator_is_in_use(monkeypatch, accelerator):
    monkeypatch.setattr(runner_view, "counts_memory", lambda: accelerator)
    processor = LogProcessor()
    processor._get_max_memory = MagicMock(return_value="100")
    tag, line = processor.get_log_after_iter(stub_runner(full_hub()), 9, "train")
    assert ("data_time: 0.0100  memory: 100  loss:" in line) is accelerator
    assert tag.get("memory") == ("100" if accelerator else None)
    assert processor._get_max_memory.called is accelerator


def test_val_iter_line_shows_val_losses_only():
    # MMEngine shows the scalars of a val line whose name starts with 'val/loss'.
    processor = LogProcessor()
    processor._collect_scalars = lambda *args: {
        "time": 0.2,
        "data_time": 0.02,
        "accuracy": 91.25,
        "val/loss_x": 0.5,
    }
    _, line = processor.get_log_after_iter(stub_runner(full_hub()), 1, "val")
    assert line == (
        "Epoch(val)  [0][2/3]    eta: 0:18:23  time: 0.2000  data_time: 0.0200  val/loss_x: 0.5000"
    )
    _, line = processor.get_log_after_iter(stub_runner(full_hub()), 1, "test")
    assert line.endswith("data_time: 0.0200  ")
