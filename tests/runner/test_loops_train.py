"""The train loops through a stub runner: hook calls, validation schedule, stopping, errors."""

from __future__ import annotations

import pytest
import torch
from loop_stub_runner import LossRecorder, StubRunner, build_loop, default_loader

from treadle.runner.loops import EpochBasedTrainLoop, IterBasedTrainLoop, calc_dynamic_intervals
from treadle.runner.registry import LOOPS


def _val_epochs(runner, unit="after_train_epoch"):
    """The train epoch (or iteration) after which each validation ran."""
    marks, progress = [], 0
    for name, _ in runner.calls:
        if name == unit:
            progress += 1
        if name == "before_val":
            marks.append(progress)
    return marks


def test_loops_are_registered_by_name():
    for name in ("EpochBasedTrainLoop", "IterBasedTrainLoop", "ValLoop", "TestLoop"):
        assert LOOPS.get(name).__name__ == name


def test_epoch_loop_calls_the_hooks_in_mmengine_order():
    runner = StubRunner(train=dict(type="EpochBasedTrainLoop", max_epochs=2))
    model = runner.train_loop.run()
    assert model is runner.model
    names = runner.hook_names()
    epoch = ["before_train_epoch"] + ["before_train_iter", "after_train_iter"] * 4
    assert names == ["before_train", *epoch, "after_train_epoch", *epoch,
                     "after_train_epoch", "after_train"]  # fmt: skip
    iters = [kw for name, kw in runner.calls if name == "after_train_iter"]
    assert [kw["batch_idx"] for kw in iters] == [0, 1, 2, 3] * 2
    assert set(iters[0]) == {"batch_idx", "data_batch", "outputs"}
    assert isinstance(iters[0]["outputs"]["loss"], torch.Tensor)
    assert (runner.train_loop.epoch, runner.train_loop.iter) == (2, 8)
    assert (runner.train_loop.max_epochs, runner.train_loop.max_iters) == (2, 8)
    assert runner.visualizer.dataset_meta == {"classes": ("loop-toy",)}


def test_iter_loop_is_one_epoch_for_the_hooks():
    runner = StubRunner(train=dict(type="IterBasedTrainLoop", max_iters=6))
    runner.train_loop.run()
    names = runner.hook_names()
    assert names[:2] == ["before_train", "before_train_epoch"]
    assert names[-2:] == ["after_train_epoch", "after_train"]
    batch_idx = [kw["batch_idx"] for name, kw in runner.calls if name == "before_train_iter"]
    assert batch_idx == [0, 1, 2, 3, 4, 5]
    loop = runner.train_loop
    assert (loop.epoch, loop.iter, loop.max_epochs, loop.max_iters) == (0, 6, 1, 6)


def test_iter_loop_restarts_a_finite_sampler_with_the_next_epoch():
    recorder = LossRecorder()
    runner = StubRunner(train=dict(type="IterBasedTrainLoop", max_iters=8), hooks=[recorder])
    runner.train_loop.run()
    first, second = recorder.indices[:4], recorder.indices[4:]
    flat = [sorted(i for batch in part for i in batch) for part in (first, second)]
    assert flat == [list(range(10))] * 2
    assert first != second  # set_epoch(1): another order


@pytest.mark.parametrize(
    ("train", "expected"),
    [
        (dict(max_epochs=5), [1, 2, 3, 4, 5]),
        (dict(max_epochs=5, val_interval=2), [2, 4, 5]),
        (dict(max_epochs=5, val_interval=2, val_begin=3), [4, 5]),
        # MMEngine's rule: the interval of a milestone holds from the epoch before it on.
        (dict(max_epochs=6, val_interval=3, dynamic_intervals=[(3, 1)]), [2, 3, 4, 5, 6]),
        (dict(max_epochs=6, dynamic_intervals=[[2, 2]]), [2, 4, 6]),
    ],
)
def test_epoch_loop_validation_schedule(train, expected):
    loader = default_loader(dataset=dict(length=3))
    runner = StubRunner(
        train=dict(type="EpochBasedTrainLoop", **train), val=dict(type="ValLoop"), loader=loader
    )
    runner.train_loop.run()
    assert _val_epochs(runner) == expected


def test_iter_loop_validation_schedule_and_model_mode():
    runner = StubRunner(
        train=dict(type="IterBasedTrainLoop", max_iters=7, val_interval=3),
        val=dict(type="ValLoop"),
    )
    modes = []

    class Mode:
        def before_train_iter(self, runner, batch_idx, data_batch=None):
            modes.append(runner.model.training)

    runner.hooks.append(Mode())
    runner.train_loop.run()
    assert _val_epochs(runner, "after_train_iter") == [3, 6, 7]
    assert all(modes)  # back in train mode after each validation


def test_validation_inside_training_draws_nothing_from_the_train_generators():
    loader = default_loader(dataset=dict(length=6))
    with_val = LossRecorder()
    StubRunner(
        train=dict(type="EpochBasedTrainLoop", max_epochs=3),
        val=dict(type="ValLoop"),
        loader=loader,
        hooks=[with_val],
    ).train_loop.run()
    without = LossRecorder()
    StubRunner(
        train=dict(type="EpochBasedTrainLoop", max_epochs=3), loader=loader, hooks=[without]
    ).train_loop.run()
    assert with_val.losses == without.losses


def test_stop_training_ends_after_the_current_epoch_or_iteration():
    class Stop:
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if runner.iter == 5:
                runner.train_loop.stop_training = True

    runner = StubRunner(train=dict(type="EpochBasedTrainLoop", max_epochs=5), hooks=[Stop()])
    runner.train_loop.run()
    assert (runner.train_loop.epoch, runner.train_loop.iter) == (2, 8)
    runner = StubRunner(train=dict(type="IterBasedTrainLoop", max_iters=50), hooks=[Stop()])
    runner.train_loop.run()
    assert runner.train_loop.iter == 6


def test_a_dataloader_object_is_used_as_given():
    loader = StubRunner.build_dataloader(default_loader(), seed=0)
    runner = StubRunner()
    loop = EpochBasedTrainLoop(runner, loader, max_epochs=1)
    assert loop.dataloader is loader


def test_a_dataloader_config_is_built_with_the_runner_seed():
    runner = StubRunner(seed=5)
    loop = IterBasedTrainLoop(runner, default_loader(), max_iters=1)
    assert loop.dataloader.sampler.seed == 5


def test_an_empty_train_dataloader_is_refused_with_its_dataset():
    runner = StubRunner()
    with pytest.raises(ValueError, match=r"train dataloader has no batches.*LoopToyDataset has 2"):
        EpochBasedTrainLoop(
            runner, default_loader(dataset=dict(length=2), drop_last=True), max_epochs=1
        )


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(max_epochs=1.5), TypeError, "max_epochs must be an int, got float: 1.5"),
        (dict(max_epochs=-1), ValueError, "max_epochs must be >= 0, got -1"),
        (dict(max_epochs=2, val_interval=0), ValueError, "val_interval must be >= 1"),
        (dict(max_epochs=2, dynamic_intervals=[(2,)]), TypeError, r"got the entry \(2,\)"),
        (dict(max_epochs=2, dynamic_intervals=[(2, 1), (1, 1)]), ValueError, "must increase"),
        (dict(max_epochs=2, dynamic_intervals=5), TypeError, "list of .milestone, interval."),
        (dict(max_epochs=2, skip_nonfinite_loss="yes"), TypeError, "skip_nonfinite_loss"),
        (dict(max_epochs=2, nonfinite_check_interval=0), ValueError, "check_interval must be"),
    ],
)
def test_bad_train_cfg_values_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        build_loop(StubRunner(), dict(type="EpochBasedTrainLoop", **kwargs), default_loader())


def test_a_whole_float_max_iters_is_accepted_as_mmengine():
    loop = build_loop(
        StubRunner(), dict(type="IterBasedTrainLoop", max_iters=4.0), default_loader()
    )
    assert loop.max_iters == 4 and isinstance(loop.max_iters, int)


def test_calc_dynamic_intervals():
    assert calc_dynamic_intervals(2) == ([0], [2])
    assert calc_dynamic_intervals(1, [(10, 5), [20, 2]]) == ([0, 10, 20], [1, 5, 2])


def test_infinite_max_epochs_is_named():
    with pytest.raises(TypeError, match="max_epochs must be an int, got float: inf"):
        build_loop(
            StubRunner(),
            dict(type="EpochBasedTrainLoop", max_epochs=float("inf")),
            default_loader(),
        )


def test_iter_loop_makes_its_iterator_when_built_as_mmengine_does():
    """Making the DataLoader iterator draws one number from torch's global generator; the
    iteration loop does it when it is built (before the Runner initialises the weights) and
    trains on that same iterator, so a fresh run draws exactly what MMEngine's does."""
    torch.manual_seed(7)
    torch.empty((), dtype=torch.int64).random_()
    after_one_draw = torch.get_rng_state()
    runner = StubRunner(train=None)
    torch.manual_seed(7)
    runner.train_loop = build_loop(
        runner, dict(type="IterBasedTrainLoop", max_iters=3), default_loader()
    )
    assert torch.equal(torch.get_rng_state(), after_one_draw)

    made = []
    loader = runner.train_loop.dataloader
    original_iter = type(loader).__iter__
    type(loader).__iter__ = lambda self: made.append(1) or original_iter(self)
    try:
        runner.train_loop.run()
    finally:
        type(loader).__iter__ = original_iter
    assert made == []
    assert runner.train_loop.iter == 3
