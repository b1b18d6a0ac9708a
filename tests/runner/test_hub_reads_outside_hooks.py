"""What code outside the hooks (a model's ``train_step``, a dataset, an optimizer wrapper) reads in
the message hub at each step is what MMEngine 0.10.7 shows there, though the train loops call
RuntimeInfoHook and IterTimerHook only where some hook is due: the hub has them write what they
skipped when it is read (treadle.runner.loops.pending_steps).

MMEngine writes the learning rate (RuntimeInfoHook) and the data time (IterTimerHook) in
``before_train_iter``, and the losses and the time in ``after_train_iter``, at every step. So the
``train_step`` of iteration ``i`` (counted from 0) reads ``i + 1`` learning rates and data
times but ``i`` losses and times, and 'iter' is ``i``; a dataset loading the batch of iteration
``i`` reads ``i`` of each, with 'iter' at ``i - 1``.
"""

from __future__ import annotations

from typing import Any

import pytest
from runner_toy_model import ToyDataset, ToyModel, toy_cfg, toy_iter_cfg

from treadle.logging import MessageHub
from treadle.runner.hooks import Hook
from treadle.runner.optim import OptimWrapper
from treadle.runner.runner import Runner

KEYS = ("train/lr", "train/loss", "train/time", "train/data_time")


def read_hub() -> dict[str, Any]:
    """History lengths of KEYS, the last lr and loss, and 'iter', as anyone may read them."""
    hub = MessageHub.get_current_instance()
    scalars = hub.log_scalars
    lengths = {key: len(scalars[key].data[0]) if key in scalars else 0 for key in KEYS}
    lr = hub.get_scalar("train/lr").current() if lengths["train/lr"] else None
    loss = hub.get_scalar("train/loss").current() if lengths["train/loss"] else None
    return dict(iter=hub.get_info("iter", None), lengths=lengths, lr=lr, loss=loss)


class ReadingModel(ToyModel):
    """Reads the hub at the start of each train_step; keeps the loss each step returned."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[dict[str, Any]] = []
        self.losses: list[float] = []
        self.lrs: list[float] = []

    def train_step(self, data: Any, optim_wrapper: Any) -> dict:
        self.reads.append(read_hub())
        self.lrs.append(optim_wrapper.get_lr()["lr"][0])
        outputs = super().train_step(data, optim_wrapper)
        self.losses.append(float(outputs["loss"]))
        return outputs


class ReadingDataset(ToyDataset):
    """Reads the hub in the main process while a batch is loaded."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: list[dict[str, Any]] = []

    def __deepcopy__(self, memo: dict) -> ReadingDataset:
        return self  # the runner copies its config: the reads come back here

    def __getitem__(self, index: int) -> dict:
        self.reads.append(read_hub())
        return super().__getitem__(index)


class ReadingOptimWrapper(OptimWrapper):
    """A user's optimizer wrapper that reads the hub from ``get_lr``, which RuntimeInfoHook
    calls while it writes what it skipped: the read must not write again (no recursion)."""

    def get_lr(self) -> dict:
        read_hub()
        return super().get_lr()


class Lengths(Hook):
    """Called only every ``every`` iterations: the history lengths after each of its calls."""

    priority = "LOWEST"

    def __init__(self, every: int) -> None:
        self.every = every
        self.seen: list[tuple[int, dict[str, int]]] = []

    def next_train_iter(self, runner, iteration, batch_idx):
        return iteration + (-(iteration + 1) % self.every)

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.seen.append((runner.iter, read_hub()["lengths"]))


def train(cfg: dict[str, Any]) -> Runner:
    runner = Runner(**cfg)
    runner.train()
    return runner


def check_train_step_reads(model: ReadingModel, start: int = 0) -> None:
    """At iteration i: i + 1 lrs and data times (this step's lr last), i losses and times (the
    last step's loss last), 'iter' i; the counts start at ``start`` for a resumed run."""
    assert len(model.reads) == len(model.losses)
    for offset, read in enumerate(model.reads):
        i = start + offset
        assert read["iter"] == i
        assert read["lengths"] == {
            "train/lr": i + 1,
            "train/loss": i,
            "train/time": i,
            "train/data_time": i + 1,
        }, i
        assert read["lr"] == pytest.approx(model.lrs[offset])
        if offset:
            assert read["loss"] == pytest.approx(model.losses[offset - 1])


def check_dataset_reads(dataset: ReadingDataset) -> None:
    """While a batch loads, every step before it is complete: as many of each key, iter + 1."""
    assert dataset.reads
    for read in dataset.reads:
        lengths = set(read["lengths"].values())
        assert len(lengths) == 1, read
        if read["iter"] is not None:
            assert lengths == {read["iter"] + 1} or lengths == {0}, read


def by_epoch_cfg(tmp_path, model, dataset, **overrides) -> dict[str, Any]:
    # A log line every 5 iterations and the lr changing by epoch: most steps call no hook.
    loader = dict(dataset=dataset, sampler=dict(type="DefaultSampler", shuffle=True), batch_size=3)
    return toy_cfg(
        tmp_path,
        model=model,
        train_dataloader=loader,
        default_hooks=dict(logger=dict(type="LoggerHook", interval=5)),
        **overrides,
    )


def test_train_step_and_dataset_read_mmengine_values_at_every_step(tmp_path):
    model, dataset, lengths = ReadingModel(), ReadingDataset(), Lengths(every=5)
    runner = train(by_epoch_cfg(tmp_path, model, dataset, custom_hooks=[lengths]))
    check_train_step_reads(model)
    check_dataset_reads(dataset)
    # The lr of each step, as the optimizer had it (MultiStepLR at epochs 1 and 2).
    assert [read["lr"] for read in model.reads] == pytest.approx(model.lrs)
    assert model.lrs[0] != model.lrs[-1]
    # Nothing written twice when the hooks are next due, nor by the reads in a row: one entry
    # per step at each call of the interval hook and at the end.
    assert [seen for seen in lengths.seen] == [
        (i, dict.fromkeys(KEYS, i + 1)) for i, _ in lengths.seen
    ]
    assert len(lengths.seen) >= 2
    hub = runner.message_hub
    assert {key: len(hub.get_scalar(key).data[0]) for key in KEYS} == dict.fromkeys(KEYS, 12)
    assert hub.get_scalar("train/loss").data[0] == pytest.approx(model.losses)


def test_validation_inside_training_and_a_user_optim_wrapper(tmp_path):
    model, dataset = ReadingModel(), ReadingDataset()
    optim_wrapper = ReadingOptimWrapper(torch_sgd(model))
    loader = dict(dataset=dataset, sampler=dict(type="DefaultSampler", shuffle=True), batch_size=3)
    cfg = toy_iter_cfg(
        tmp_path,
        model=model,
        train_dataloader=loader,
        optim_wrapper=optim_wrapper,
        param_scheduler=None,
        train_cfg=dict(by_epoch=False, max_iters=13, val_interval=4),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=6),
            checkpoint=dict(type="CheckpointHook", interval=6, by_epoch=False),
        ),
    )
    runner = train(cfg)
    check_train_step_reads(model)
    check_dataset_reads(dataset)
    hub = runner.message_hub
    assert {key: len(hub.get_scalar(key).data[0]) for key in KEYS} == dict.fromkeys(KEYS, 13)
    assert hub.pending_writer is None  # the loop took its writer back


def test_a_resumed_run_reads_what_the_uninterrupted_one_read(tmp_path):
    def cfg(work_dir, model, **extra):
        return toy_iter_cfg(
            work_dir,
            model=model,
            param_scheduler=None,
            train_cfg=dict(by_epoch=False, max_iters=12, val_interval=6),
            default_hooks=dict(
                logger=dict(type="LoggerHook", interval=5),
                checkpoint=dict(type="CheckpointHook", interval=6, by_epoch=False),
            ),
            **extra,
        )

    whole = ReadingModel()
    train(cfg(tmp_path / "whole", whole))
    resumed = ReadingModel()
    checkpoint = str(tmp_path / "whole" / "iter_6.pth")
    train(cfg(tmp_path / "resumed", resumed, load_from=checkpoint, resume=True))
    check_train_step_reads(resumed, start=6)
    assert [read["lengths"] for read in resumed.reads] == [r["lengths"] for r in whole.reads[6:]]
    assert [read["loss"] for read in resumed.reads] == pytest.approx(
        [read["loss"] for read in whole.reads[6:]]
    )


def test_a_runner_without_the_recording_hooks(tmp_path):
    model, dataset = ReadingModel(), ReadingDataset()
    cfg = by_epoch_cfg(tmp_path, model, dataset)
    cfg["default_hooks"].update(runtime_info=None, timer=None)
    train(cfg)
    # Nothing records: no scalars, and 'iter' is still the current iteration.
    assert [read["iter"] for read in model.reads] == list(range(12))
    assert all(set(read["lengths"].values()) == {0} for read in model.reads)


def torch_sgd(model: ReadingModel) -> Any:
    import torch

    return torch.optim.SGD(model.parameters(), lr=0.01)
