"""LogProcessor's MMEngine-named private helpers (``_get_iter``, ``_get_epoch``,
``_get_cur_loop``, ``_parse_windows_size``, ``_collect_scalars``, ``_collect_non_scalars``,
``_get_max_memory``...), which toolbox log processors and their tests call."""

from __future__ import annotations

import itertools

import pytest
import torch
from log_processor_stub import fill_train, stub_runner

from treadle.logging import MessageHub
from treadle.runner.log_processor import LogProcessor, runner_view

_names = itertools.count()


@pytest.fixture
def hub():
    # Each test its own hub: MessageHub names are process-wide.
    return MessageHub(f"log_processor_private_names-{next(_names)}")


def test_get_iter_is_the_batch_by_epoch_and_the_global_iteration_otherwise(hub):
    runner = stub_runner(hub, iter=9)
    assert LogProcessor(by_epoch=True)._get_iter(runner, batch_idx=4) == 5
    assert LogProcessor(by_epoch=False)._get_iter(runner) == 10
    with pytest.raises(TypeError, match="needs batch_idx when by_epoch=True"):
        LogProcessor(by_epoch=True)._get_iter(runner)


def test_get_epoch_of_train_and_val(hub):
    processor = LogProcessor()
    assert processor._get_epoch(stub_runner(hub, epoch=2), "train") == 3
    assert processor._get_epoch(stub_runner(hub, epoch=2), "val") == 2
    assert processor._get_epoch(stub_runner(hub, epoch=2, train_loop_built=False), "val") == 0
    with pytest.raises(ValueError, match="runner mode should be 'train' or 'val', but got test"):
        processor._get_epoch(stub_runner(hub), "test")


def test_get_cur_loop_and_dataloader_size(hub):
    processor = LogProcessor()
    runner = stub_runner(hub, train_len=20, val_len=10, test_len=5)
    assert processor._get_cur_loop(runner, "train") is runner.train_loop
    assert processor._get_cur_loop(runner, "val") is runner.val_loop
    assert processor._get_cur_loop(runner, "test") is runner.test_loop
    sizes = [processor._get_dataloader_size(runner, mode) for mode in ("train", "val", "test")]
    assert sizes == [20, 10, 5]
    # A loader without a length (an iterable dataset): None, where MMEngine fails.
    assert processor._get_dataloader_size(stub_runner(hub, val_len=None), "val") is None


def test_remove_prefix():
    processor = LogProcessor()
    assert processor._remove_prefix("train/loss", "train/") == "loss"
    assert processor._remove_prefix("loss", "train/") == "loss"


def test_parse_windows_size_resolves_epoch_and_global_in_a_copy(hub):
    processor = LogProcessor()
    runner = stub_runner(hub, iter=10)
    cfg = [
        dict(data_src="loss", window_size="epoch"),
        dict(data_src="loss", log_name="g", window_size="global"),
        dict(data_src="loss", log_name="i", window_size=100),
        dict(data_src="loss", log_name="n"),
    ]
    parsed = processor._parse_windows_size(runner, 1, cfg)
    assert [entry.get("window_size") for entry in parsed] == [2, 11, 100, None]
    assert cfg[0]["window_size"] == "epoch"  # the caller's list is left alone
    # Without custom_cfg: the processor's own.
    own = LogProcessor(custom_cfg=[dict(data_src="loss", method_name="mean", window_size="epoch")])
    assert own._parse_windows_size(runner, 4) == [
        dict(data_src="loss", method_name="mean", window_size=5)
    ]
    assert LogProcessor()._parse_windows_size(runner, 4) == []


def test_parse_windows_size_refuses_another_window_with_mmengine_phrase(hub):
    with pytest.raises(
        TypeError,
        match=r"custom_cfg\[0\]: window_size should be int, epoch or global \(an int, 'epoch' "
        r"or 'global'\), got list: \[\]",
    ):
        LogProcessor()._parse_windows_size(stub_runner(hub), 1, [dict(window_size=[])])


def scalars_hub(hub: MessageHub) -> MessageHub:
    for i in range(1, 21):
        hub.update_scalar("train/time", float(i))
        hub.update_scalar("train/loss_cls", torch.tensor(float(i)))
    hub.update_scalar("lr", 0.1)  # no mode: in no mode's scalars
    hub.update_scalar("val/metric", 0.5)
    return hub


def test_collect_scalars_with_and_without_the_mode_prefix(hub):
    cfg = [dict(data_src="time", method_name="max", log_name="time_max")]
    processor = LogProcessor(custom_cfg=cfg)
    runner = stub_runner(scalars_hub(hub))
    tag = processor._collect_scalars(cfg, runner, "train")
    # Losses and times: the mean of the last window_size (10) values.
    assert tag == {"time": 15.5, "loss_cls": 15.5, "time_max": 20.0}
    assert all(type(value) is float for value in tag.values())
    assert processor._collect_scalars(cfg, runner, "val") == {"metric": 0.5}
    tag = processor._collect_scalars(cfg, runner, "train", reserve_prefix=True)
    assert list(tag) == ["train/time", "train/loss_cls", "train/time_max"]


def test_collect_scalars_takes_the_windows_parse_gave(hub):
    processor = LogProcessor()
    runner = stub_runner(scalars_hub(hub), iter=19)
    cfg = [dict(data_src="time", log_name="t", method_name="mean", window_size="global")]
    tag = processor._collect_scalars(processor._parse_windows_size(runner, 3, cfg), runner, "train")
    assert tag["t"] == 10.5
    # MMEngine fails too on a window left unresolved (its buffer slices with the string).
    with pytest.raises(TypeError, match=r"window_size 'global' is not resolved: pass custom_cfg"):
        processor._collect_scalars(cfg, runner, "train")


def test_collect_non_scalars_of_a_mode(hub):
    table = torch.arange(3)
    hub.update_info("test/table", table)
    hub.update_info("val/other", 1)
    runner = stub_runner(hub)
    assert LogProcessor()._collect_non_scalars(runner, "test") == {"table": table}
    tagged = LogProcessor(log_with_hierarchy=True)._collect_non_scalars(runner, "test")
    assert tagged == {"test/table": table}


def test_get_max_memory_reads_the_accelerator_in_use(hub, monkeypatch):
    seen = []
    monkeypatch.setattr(runner_view, "counts_memory", lambda: True)
    monkeypatch.setattr(runner_view, "get_max_memory", lambda device: seen.append(device) or 123)
    runner = stub_runner(hub)
    runner.model.output_device = 1
    assert LogProcessor()._get_max_memory(runner) == 123
    assert seen == [1]


def test_get_max_memory_without_accelerator_asks_cuda_as_mmengine(hub, monkeypatch):
    # MMEngine's method reads torch.cuda's counters; code that stands in for them sees it.
    calls = []
    monkeypatch.setattr(runner_view, "counts_memory", lambda: False)
    monkeypatch.setattr(
        torch.cuda, "max_memory_allocated", lambda d: calls.append(("peak", d)) or 5 << 20
    )
    monkeypatch.setattr(torch.cuda, "reset_peak_memory_stats", lambda d: calls.append(("reset", d)))
    assert LogProcessor()._get_max_memory(stub_runner(hub)) == 5
    assert calls == [("peak", None), ("reset", None)]


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_get_max_memory_is_none_where_cuda_cannot_answer(hub, monkeypatch):
    monkeypatch.setattr(runner_view, "counts_memory", lambda: False)
    assert LogProcessor()._get_max_memory(stub_runner(hub)) is None


def test_check_custom_cfg_rechecks_the_entries(hub):
    processor = LogProcessor()
    processor.custom_cfg.append(dict(data_src="loss", log_name="m", method_name="max"))
    processor._check_custom_cfg()
    fill_train(hub)
    tag, _ = processor.get_log_after_iter(stub_runner(hub), 9, "train")
    assert tag["m"] == 12.0
