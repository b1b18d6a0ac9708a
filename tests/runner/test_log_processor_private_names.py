"""LogProcessor's MMEngine-named private helpers (``_get_iter``, ``_get_epoch``,
``_get_max_memory``), which toolbox log processors and their tests call."""

from __future__ import annotations

import pytest
from log_processor_stub import stub_runner

from treadle.logging import MessageHub
from treadle.runner.log_processor import LogProcessor


@pytest.fixture
def hub():
    return MessageHub.get_instance("log_processor_private_names")


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


def test_get_max_memory_reads_the_peak_memory_of_the_model_device(hub, monkeypatch):
    import treadle.runner.log_processor.runner_view as runner_view

    monkeypatch.setattr(runner_view, "get_max_memory", lambda device: 123)
    assert LogProcessor()._get_max_memory(stub_runner(hub)) == 123
