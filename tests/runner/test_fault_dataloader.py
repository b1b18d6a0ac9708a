"""Data loader failures name the dataset index and the worker: a ``__getitem__`` that raises,
in the main process or in a worker, and a worker process that dies."""

from __future__ import annotations

import pytest
from runner_toy_model import toy_iter_cfg
from storage_toys import DyingDataset, RaisingDataset

from treadle.runner.runner import Runner
from treadle.runner.runner.dataloader import build_dataloader
from treadle.runner.runner.dataloader_errors import DataLoaderWorkerError, DatasetItemError


def loader_cfg(dataset: str, workers: int, **extra) -> dict:
    return dict(
        dataset=dict(type=dataset, length=12, bad_index=5),
        sampler=dict(type="DefaultSampler", shuffle=False),
        batch_size=3,
        num_workers=workers,
        **extra,
    )


def test_a_raising_getitem_in_the_main_process_names_the_index(tmp_path):
    cfg = toy_iter_cfg(tmp_path, train_dataloader=loader_cfg("StorageRaisingDataset", 0))
    runner = Runner(**cfg)
    with pytest.raises(DatasetItemError) as info:
        runner.train()
    message = str(info.value)
    assert (
        "train_dataloader: RaisingDataset[5] raised ValueError: cannot decode sample 5" in message
    )
    assert "(in the main process (num_workers=0)); the dataset index is 5" in message
    assert isinstance(info.value.__cause__, ValueError)
    assert runner.iter == 1  # batch 0 (samples 0-2) trained, batch 1 failed
    assert isinstance(runner.train_dataloader.dataset, RaisingDataset)


def test_a_raising_getitem_in_a_worker_names_the_index_and_the_worker():
    loader = build_dataloader(loader_cfg("StorageRaisingDataset", 2), seed=0)
    with pytest.raises(DatasetItemError) as info:
        list(loader)
    message = str(info.value)
    assert "Caught DatasetItemError in DataLoader worker process 1" in message
    assert "RaisingDataset[5] raised ValueError: cannot decode sample 5" in message
    assert "(in DataLoader worker 1 (pid " in message and "the dataset index is 5" in message


def test_a_dying_worker_names_the_index_it_was_reading():
    loader = build_dataloader(loader_cfg("StorageDyingDataset", 2, timeout=60), seed=0)
    assert isinstance(loader.dataset, DyingDataset)  # what the user built, not a wrapper
    with pytest.raises(DataLoaderWorkerError) as info:
        list(loader)
    message = str(info.value)
    assert "dataloader: a DataLoader worker died: worker 1 (pid " in message
    assert "exit code 3) while reading dataset index 5 of DyingDataset" in message
    assert "num_workers=0 reads it in the main process" in message


def test_a_worker_killed_by_a_signal(monkeypatch):
    import os
    import signal

    def killed(self, index):
        if index == 4:
            os.kill(os.getpid(), signal.SIGKILL)
        return DyingDataset.__mro__[1].__getitem__(self, index)

    monkeypatch.setattr(DyingDataset, "__getitem__", killed)
    loader = build_dataloader(loader_cfg("StorageDyingDataset", 2), seed=0)
    with pytest.raises(
        DataLoaderWorkerError,
        match=r"worker 1 \(pid \d+, killed by signal 9\) "
        r"while reading dataset index 4",
    ):
        list(loader)


def test_loaders_that_work_are_unchanged():
    cfg = loader_cfg("RunnerToyDataset", 2, persistent_workers=True)
    cfg["dataset"] = dict(type="RunnerToyDataset", length=12)
    loader = build_dataloader(cfg, seed=0)
    first = [batch["inputs"][0] for batch in loader]
    second = [batch["inputs"][0] for batch in loader]
    assert len(first) == 4 and all((a == b).all() for a, b in zip(first, second, strict=True))
