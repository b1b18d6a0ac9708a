"""Exact resume of the train loops: a run stopped at any point and resumed from its saved
state (through torch.save / weights_only load) trains on the same batches with the same
random numbers, so its losses equal the uninterrupted run's bit for bit."""

from __future__ import annotations

import pytest
import torch
from loop_stub_runner import LossRecorder, SamplerSeedStub, SnapshotAt, StubRunner, default_loader


def _run(train, loader, snapshot=None, val=None, state=None, seed=0, torch_seed=0):
    recorder = LossRecorder()
    hooks = [SamplerSeedStub(), recorder] + ([snapshot] if snapshot else [])
    runner = StubRunner(
        train=train, val=val, loader=loader, hooks=hooks, seed=seed, torch_seed=torch_seed
    )
    if state is not None:
        runner.model.load_state_dict(state["model"])
        runner.optim_wrapper.load_state_dict(state["optimizer"])
        runner.train_loop.load_state_dict(state["loop"])
    runner.train_loop.run()
    return runner, recorder


def _check_resume(train, loader, snapshot, val=None, done=None):
    _, full = _run(train, loader, snapshot=snapshot, val=val)
    assert snapshot.snapshot is not None
    # Another seed and other global generators: the state must bring back all of them.
    runner, resumed = _run(train, loader, val=val, state=snapshot.snapshot, seed=99, torch_seed=7)
    done = snapshot.snapshot["loop"]["iter"] if done is None else done
    assert resumed.indices == full.indices[done:]
    assert resumed.losses == full.losses[done:]
    return runner


EPOCHS = dict(type="EpochBasedTrainLoop", max_epochs=3)


@pytest.mark.parametrize("iteration", [1, 2, 4, 5, 11])
def test_epoch_loop_resumes_mid_epoch_and_at_epoch_end_bit_for_bit(iteration):
    # 4 batches per epoch: 4 is the last batch of epoch 1 (its after_train_epoch not run yet).
    loader = default_loader(dataset=dict(length=10, noise=True))
    runner = _check_resume(EPOCHS, loader, SnapshotAt(iteration=iteration))
    assert runner.train_loop.epoch == 3 and runner.train_loop.iter == 12


def test_epoch_loop_resumes_from_an_epoch_boundary_with_validation_between():
    loader = default_loader(dataset=dict(length=10, noise=True))
    _check_resume(EPOCHS, loader, SnapshotAt(epoch=1), val=dict(type="ValLoop"))


def test_resumed_mid_epoch_run_calls_after_train_epoch_of_that_epoch_once():
    _, _ = _run(EPOCHS, default_loader(), snapshot=(snap := SnapshotAt(iteration=6)))
    runner, _ = _run(EPOCHS, default_loader(), state=snap.snapshot)
    names = runner.hook_names()
    assert names.count("after_train_epoch") == 2  # epochs 2 and 3
    assert names.count("before_train_epoch") == 2
    assert names.count("after_train_iter") == 6
    first = next(kw for name, kw in runner.calls if name == "before_train_iter")
    assert first["batch_idx"] == 2  # the third batch of epoch 2


@pytest.mark.parametrize("num_workers", [0, 2])
def test_epoch_loop_resume_with_dataloader_workers(num_workers):
    # Workers read ahead of the loop; the saved position counts only the batches trained on.
    loader = default_loader(dataset=dict(length=16), num_workers=num_workers)
    _check_resume(dict(type="EpochBasedTrainLoop", max_epochs=2), loader, SnapshotAt(iteration=3))


ITERS = dict(type="IterBasedTrainLoop", max_iters=11, val_interval=4)


@pytest.mark.parametrize("iteration", [1, 4, 5, 8, 9])
@pytest.mark.parametrize("sampler", ["DefaultSampler", "InfiniteSampler"])
def test_iter_loop_resumes_bit_for_bit(iteration, sampler):
    # DefaultSampler: passes of 4 batches end at iterations 4 and 8 and restart the loader.
    loader = default_loader(dataset=dict(length=10, noise=True), sampler=dict(type=sampler))
    _check_resume(ITERS, loader, SnapshotAt(iteration=iteration), val=dict(type="ValLoop"))


@pytest.mark.parametrize("num_workers", [0, 2])
def test_iter_loop_resume_with_dataloader_workers(num_workers):
    loader = default_loader(
        dataset=dict(length=12), sampler=dict(type="InfiniteSampler"), num_workers=num_workers
    )
    train = dict(type="IterBasedTrainLoop", max_iters=9)
    _check_resume(train, loader, SnapshotAt(iteration=5))


def test_sampler_seed_comes_from_the_state_when_the_sampler_draws_its_own():
    # seed=None: each run draws a sampler seed; the resumed run must use the saved one.
    loader = default_loader(sampler=dict(type="DefaultSampler", seed=None))
    _check_resume(EPOCHS, loader, SnapshotAt(iteration=6))


def test_loop_state_holds_only_plain_types_and_tensors():
    snap = SnapshotAt(iteration=6)
    _run(EPOCHS, default_loader(), snapshot=snap)
    state = snap.snapshot["loop"]
    assert (state["type"], state["epoch"], state["iter"], state["batch_idx"]) == (
        "EpochBasedTrainLoop",
        1,
        6,
        2,
    )
    assert state["sampler"]["position"] == 6 and state["sampler"]["epoch"] == 1
    # With "device" beside them once an accelerator is in use.
    assert sorted(set(state["rng"]) - {"device"}) == ["numpy", "python", "torch"]
    assert isinstance(state["rng"]["torch"], torch.Tensor)


def test_state_at_epoch_end_points_at_the_next_epoch():
    snap = SnapshotAt(epoch=2)
    _run(EPOCHS, default_loader(), snapshot=snap)
    state = snap.snapshot["loop"]
    assert (state["epoch"], state["iter"], state["batch_idx"]) == (2, 8, 0)
    assert state["sampler"]["position"] == 0


def test_mmengine_checkpoint_counters_without_loop_state_resume_mid_epoch():
    # An MMEngine checkpoint saved by iteration in an epoch loop holds only epoch and iter;
    # MMEngine restarts the epoch, treadle goes on with the next batch.
    _, full = _run(EPOCHS, default_loader(), snapshot=(snap := SnapshotAt(iteration=6)))
    runner = StubRunner(train=EPOCHS, loader=default_loader(), hooks=[SamplerSeedStub()])
    recorder = LossRecorder()
    runner.hooks.append(recorder)
    runner.model.load_state_dict(snap.snapshot["model"])
    runner.optim_wrapper.load_state_dict(snap.snapshot["optimizer"])
    runner.train_loop._epoch, runner.train_loop._iter = 1, 6
    runner.train_loop.run()
    assert recorder.indices == full.indices[6:]


def test_mmengine_checkpoint_counters_iter_loop_positions_infinite_sampler():
    loader = default_loader(sampler=dict(type="InfiniteSampler"))
    train = dict(type="IterBasedTrainLoop", max_iters=9)
    _, full = _run(train, loader)
    runner = StubRunner(train=train, loader=loader, hooks=[recorder := LossRecorder()])
    runner.train_loop._iter = 5
    runner.train_loop.run()
    assert recorder.indices == full.indices[5:]


def test_loading_a_state_of_the_other_loop_type_names_both():
    snap = SnapshotAt(iteration=2)
    _run(EPOCHS, default_loader(), snapshot=snap)
    runner = StubRunner(train=dict(type="IterBasedTrainLoop", max_iters=4))
    with pytest.raises(ValueError, match=r"saved by a EpochBasedTrainLoop.*IterBasedTrainLoop"):
        runner.train_loop.load_state_dict(snap.snapshot["loop"])


def test_loading_a_state_without_position_names_the_missing_keys():
    runner = StubRunner(train=EPOCHS)
    with pytest.raises(KeyError, match="no 'batch_idx'"):
        runner.train_loop.load_state_dict(dict(epoch=1, iter=3))
    with pytest.raises(TypeError, match="needs a dict, got list"):
        runner.train_loop.load_state_dict([1, 2])


def test_a_sampler_without_state_is_replayed_with_a_warning():
    from runner_toys import captured_log
    from torch.utils.data import DataLoader, SequentialSampler

    from treadle.runner.loops import EpochBasedTrainLoop

    def loader():
        dataset = StubRunner.build_dataloader(default_loader()).dataset
        return DataLoader(dataset, sampler=SequentialSampler(dataset), batch_size=3)

    full = LossRecorder()
    runner = StubRunner(hooks=[full])
    runner.train_loop = EpochBasedTrainLoop(runner, loader(), max_epochs=2)
    runner.train_loop.run()
    resumed = LossRecorder()
    runner = StubRunner(hooks=[resumed])
    runner.train_loop = EpochBasedTrainLoop(runner, loader(), max_epochs=2)
    runner.train_loop._epoch, runner.train_loop._iter = 1, 6
    with captured_log() as log:
        runner.train_loop.run()
    assert resumed.indices == full.indices[6:]
    assert any("cannot save its position: skipping the 2 batch" in m for m in log.messages)
