"""NaN/inf losses: named with their iteration, found without a sync per step, or skipped."""

from __future__ import annotations

import pytest
import torch
from loop_stub_runner import LossRecorder, SnapshotAt, StubRunner
from runner_toys import captured_log

from treadle.logging import MMLogger
from treadle.runner.loops import NonFiniteLossError
from treadle.runner.loops.nonfinite import LossWatch, SkipNonFiniteOptimWrapper
from treadle.runner.optim import OptimWrapper

EPOCHS = dict(type="EpochBasedTrainLoop", max_epochs=3)


def test_a_nan_loss_stops_training_naming_the_first_bad_iteration():
    runner = StubRunner(train=EPOCHS, model=dict(nonfinite_at=(5, 6)))
    with pytest.raises(NonFiniteLossError) as error:
        runner.train_loop.run()
    message = str(error.value)
    assert "loss is nan at iteration 6 (epoch 2, batch 2)" in message
    assert "skip_nonfinite_loss=True" in message
    # Found at the end of epoch 2 (the check interval is 50): no sync at each step.
    assert runner.train_loop.iter == 8


def test_the_check_interval_bounds_how_late_a_nan_is_found():
    train = dict(type="IterBasedTrainLoop", max_iters=40, nonfinite_check_interval=4)
    runner = StubRunner(train=train, model=dict(nonfinite_at=(9,)))
    with pytest.raises(NonFiniteLossError, match=r"is nan at iteration 10;"):
        runner.train_loop.run()
    assert runner.train_loop.iter == 11  # checked after iteration 12 (index 11)


def test_no_checkpoint_state_is_taken_past_a_nan_loss():
    snapshot = SnapshotAt(iteration=3)
    runner = StubRunner(train=EPOCHS, model=dict(nonfinite_at=(1,)), hooks=[snapshot])
    with pytest.raises(NonFiniteLossError, match="iteration 2 "):
        runner.train_loop.run()
    assert snapshot.snapshot is None


def test_skip_nonfinite_loss_drops_the_batch_and_goes_on():
    recorder = LossRecorder()
    train = dict(EPOCHS, skip_nonfinite_loss=True)
    runner = StubRunner(train=train, model=dict(nonfinite_at=(2,)), hooks=[recorder])
    MMLogger.get_instance("loops-skip")
    before = [p.detach().clone() for p in runner.model.parameters()]

    class Params:
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if runner.iter == 2:
                after = list(runner.model.parameters())
                assert all(torch.equal(a, b) for a, b in zip(before_step, after, strict=True))

        def before_train_iter(self, runner, batch_idx, data_batch=None):
            before_step[:] = [p.detach().clone() for p in runner.model.parameters()]

    before_step = before
    runner.hooks.append(Params())
    with captured_log() as log:
        runner.train_loop.run()
    assert runner.train_loop.iter == 12
    assert sum(loss != loss for loss in recorder.losses) == 1
    assert "skipped a batch whose loss is nan at iteration 3" in "\n".join(log.messages)


def test_skip_guard_passes_other_calls_through_and_guards_each_optimizer():
    model = torch.nn.Linear(2, 1)
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=1.0))
    guard = SkipNonFiniteOptimWrapper(dict(a=wrapper))
    guard["a"].update_params(torch.tensor(float("inf")))
    assert guard.skipped == 1
    guard = SkipNonFiniteOptimWrapper(wrapper)
    assert guard.get_lr() == wrapper.get_lr()
    loss = model(torch.ones(1, 2)).sum()
    guard.update_params(loss)
    assert guard.skipped == 0 and wrapper.inner_count == 1


def test_loss_watch_ignores_outputs_without_a_loss_and_accepts_numbers():
    watch = LossWatch(check_interval=2)
    watch.add(["not", "a", "dict"], 0, 0, 0)
    watch.add({"acc": torch.tensor(float("nan"))}, 0, 0, 0)
    watch.add({"loss": 1.0}, 0, 0, 0)
    with pytest.raises(NonFiniteLossError, match="loss is inf at iteration 2 "):
        watch.add({"loss": float("inf")}, 1, 0, 1)


def test_loss_watch_interval_is_checked():
    with pytest.raises(TypeError, match="nonfinite_check_interval must be an int, got str"):
        LossWatch("5")


@pytest.mark.parametrize(
    "losses, bad",
    [
        ([torch.tensor(1.0), torch.tensor(float("nan")), torch.tensor(2.0)], 1),  # CPU scalars
        ([torch.ones(2), torch.tensor([1.0, float("-inf")])], 1),  # several elements each
        ([torch.tensor(1.0), 2.0, torch.tensor(float("inf"))], 2),  # numbers among tensors
        ([torch.tensor(1.0 + 0j), torch.tensor(complex(float("nan"), 0))], 1),  # complex
    ],
)
def test_loss_watch_finds_the_bad_loss_whatever_the_losses_are(losses, bad):
    watch = LossWatch(check_interval=len(losses))
    with pytest.raises(NonFiniteLossError, match=f"at iteration {bad + 1} "):
        for index, loss in enumerate(losses):
            watch.add({"loss": loss}, index, 0, index)
    finite = LossWatch(check_interval=2)
    finite.add({"loss": torch.tensor(1.0)}, 0, 0, 0)
    finite.add({"loss": torch.ones(3)}, 1, 0, 1)  # no error: all finite
