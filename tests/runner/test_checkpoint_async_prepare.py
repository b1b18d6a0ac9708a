"""The host buffers of the first asynchronous save are made ready ahead of it: after the
optimizers' first step a low-priority thread allocates them and faults their pages in, so the
first save's background copy (which the next optimizer step waits for) faults in nothing; a
save that comes before they are all ready takes what is ready and allocates the rest."""

from __future__ import annotations

import resource
import threading

import torch

from treadle.runner.checkpoint import async_writer
from treadle.runner.checkpoint.async_writer import AsyncCheckpointWriter, storage_keys
from treadle.runner.hooks import Hook

MIB = 1 << 20
# Over glibc's largest mmap threshold (32 MiB): always fresh pages from the kernel, never a
# block an earlier test freed.
BIG = 40 * MIB
PAGES = BIG // 4096


def _join_preparing(timeout: float = 30) -> None:
    for thread in threading.enumerate():
        if thread.name.endswith("-prepare"):
            thread.join(timeout)


def _count_copy_faults(monkeypatch) -> list[int]:
    """The minor page faults of each background copy (the writer thread's own)."""
    faults: list[int] = []
    copy_all = async_writer._copy_all

    def counted(copies, ready):
        before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
        copy_all(copies, ready)
        faults.append(resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before)

    monkeypatch.setattr(async_writer, "_copy_all", counted)
    return faults


def _model():
    weights = torch.nn.Parameter(torch.randn(BIG // 4))
    optimizer = torch.optim.SGD([weights], lr=0.5)
    weights.grad = torch.ones_like(weights)
    return weights, optimizer


def _save(writer, tmp_path, weights, optimizer, name="a.pth"):
    writer.save(
        {"state_dict": {"w": weights}}, str(tmp_path / name), background=storage_keys([weights])
    )
    writer.guard([optimizer])


def test_the_first_copy_faults_in_nothing_once_prepared(tmp_path, monkeypatch):
    faults = _count_copy_faults(monkeypatch)
    for prepared in (False, True):
        weights, optimizer = _model()
        writer = AsyncCheckpointWriter()
        if prepared:
            writer.prepare([optimizer], lambda weights=weights: [weights])
        optimizer.step()  # the first step: the buffers are prepared after it
        _join_preparing()
        _save(writer, tmp_path, weights, optimizer, f"{prepared}.pth")
        writer.wait()
    unprepared, prepared = faults
    assert unprepared > PAGES // 2  # a fresh buffer's pages
    assert prepared < PAGES // 20


def test_nothing_is_prepared_before_the_first_step(monkeypatch):
    weights, optimizer = _model()
    asked = []
    writer = AsyncCheckpointWriter()
    writer.prepare([optimizer], lambda: asked.append(1) or [weights])
    assert asked == []  # the optimizer's state does not exist yet
    optimizer.step()
    optimizer.step()
    _join_preparing()
    assert asked == [1]  # once


def test_a_save_before_the_buffers_are_ready_is_complete(tmp_path, monkeypatch):
    weights, optimizer = _model()
    release = threading.Event()
    zero = torch.Tensor.zero_

    def slow_zero(tensor):  # the preparing thread's page touching, held back
        if threading.current_thread().name.endswith("-prepare"):
            release.wait(10)
        return zero(tensor)

    monkeypatch.setattr(torch.Tensor, "zero_", slow_zero)
    writer = AsyncCheckpointWriter()
    writer.prepare([optimizer], lambda: [weights])
    optimizer.step()
    expected = weights.detach().clone()
    _save(writer, tmp_path, weights, optimizer)
    release.set()
    optimizer.step()
    writer.wait()
    _join_preparing()
    saved = torch.load(tmp_path / "a.pth", weights_only=True)["state_dict"]["w"]
    assert torch.equal(saved, expected)


def test_checkpoint_hook_prepares_the_first_save(tmp_path, monkeypatch):
    from runner_toy_model import ToyModel, toy_cfg

    from treadle.runner.runner import Runner

    model = ToyModel()
    model.register_parameter("big", torch.nn.Parameter(torch.zeros(BIG // 4)))
    faults = _count_copy_faults(monkeypatch)
    prepared = []

    class AwaitPreparing(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if runner.iter == 1:  # after the first step, before the first save (iteration 2)
                _join_preparing()
                prepared.append(True)

    cfg = toy_cfg(
        tmp_path,
        train_cfg=dict(by_epoch=False, max_iters=4, val_interval=100),
        param_scheduler=None,
        default_hooks=dict(
            checkpoint=dict(type="CheckpointHook", interval=2, by_epoch=False, async_save=True)
        ),
        model=model,
        custom_hooks=[AwaitPreparing()],
        log_level="WARNING",
    )
    Runner(**cfg).train()
    assert prepared and len(faults) == 2
    assert faults[0] < PAGES // 20  # copied into ready pages
