"""RuntimeInfoHook (what it publishes in the message hub, loop stages, no reading of tensors)
and IterTimerHook (time keys per loop, eta)."""

from __future__ import annotations

import pytest
import torch
from hooks_a_stub_runner import HooksStubRunner

from treadle.runner.hooks import IterTimerHook, RuntimeInfoHook
from treadle.runner.optim import OptimWrapperDict


@pytest.fixture
def runner(tmp_path):
    return HooksStubRunner(tmp_path)


def test_before_run_publishes_config_seed_name_and_version(runner):
    from treadle.runner import __version__

    RuntimeInfoHook().before_run(runner)
    hub = runner.message_hub
    assert hub.get_info("cfg") == runner.cfg.pretty_text
    assert hub.get_info("seed") == 7
    assert hub.get_info("experiment_name") == runner.experiment_name
    assert hub.get_info("treadle_version") == __version__


def test_before_train_publishes_the_position_and_dataset_meta(runner):
    runner.epoch, runner.iter = 1, 5
    RuntimeInfoHook().before_train(runner)
    hub = runner.message_hub
    assert [
        hub.get_info(k) for k in ("loop_stage", "epoch", "iter", "max_epochs", "max_iters")
    ] == [
        "train",
        1,
        5,
        3,
        12,
    ]
    assert hub.get_info("dataset_meta") == {"classes": ("a", "b")}


def test_epoch_iter_lr_and_outputs_reach_the_hub(runner):
    hook = RuntimeInfoHook()
    runner.epoch, runner.iter = 2, 7
    hook.before_train_epoch(runner)
    hook.before_train_iter(runner, batch_idx=3)
    loss = torch.tensor(0.25, requires_grad=True) * 2
    hook.after_train_iter(runner, 3, outputs={"loss": loss, "acc": 0.5})
    hub = runner.message_hub
    assert hub.get_info("epoch") == 2
    assert hub.get_info("iter") == 7
    assert hub.get_scalar("train/lr").current() == pytest.approx(0.1)
    assert hub.get_scalar("train/loss").current() == pytest.approx(0.5)
    assert hub.get_scalar("train/acc").current() == 0.5


def test_outputs_are_stored_unread(runner, monkeypatch):
    # A tensor's .item() is the device sync the step path must not do; the hub keeps tensors
    # and reads them when the log processor asks.
    read = []
    original = torch.Tensor.item

    def spy(self):
        read.append(self)
        return original(self)

    monkeypatch.setattr(torch.Tensor, "item", spy)
    hook = RuntimeInfoHook()
    for step in range(5):
        hook.after_train_iter(runner, step, outputs={"loss": torch.tensor(float(step))})
    assert read == []
    assert runner.message_hub.get_scalar("train/loss").mean() == 2.0


def test_several_optimizers_publish_each_lr(runner):
    model = torch.nn.Linear(2, 2)
    from treadle.runner.optim import OptimWrapper

    runner.optim_wrapper = OptimWrapperDict(
        gen=OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1)),
        disc=OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.2)),
    )
    RuntimeInfoHook().before_train_iter(runner, 0)
    hub = runner.message_hub
    assert hub.get_scalar("train/gen.lr").current() == pytest.approx(0.1)
    assert hub.get_scalar("train/disc.lr").current() == pytest.approx(0.2)


def test_get_lr_that_is_not_a_dict_is_refused(runner):
    class Odd:
        def get_lr(self):
            return [0.1]

    runner.optim_wrapper = Odd()
    with pytest.raises(TypeError, match=r"Odd returned list.*OptimWrapper or an OptimWrapperDict"):
        RuntimeInfoHook().before_train_iter(runner, 0)


def test_loop_stage_through_train_val_and_test(runner):
    hook = RuntimeInfoHook()
    hub = runner.message_hub
    hook.before_run(runner)
    hook.before_train(runner)
    hook.before_val(runner)
    assert hub.get_info("loop_stage") == "val"
    hook.after_val(runner)
    assert hub.get_info("loop_stage") == "train"
    hook.after_train(runner)
    assert hub.get_info("loop_stage", None) is None
    hook.before_val(runner)  # runner.val() on its own
    hook.after_val(runner)
    assert hub.get_info("loop_stage", None) is None
    hook.before_test(runner)
    assert hub.get_info("loop_stage") == "test"
    hook.after_test(runner)
    assert hub.get_info("loop_stage", None) is None


def test_metrics_go_to_scalars_or_info(runner):
    hook = RuntimeInfoHook()
    matrix = torch.eye(2)
    hook.after_val_epoch(runner, metrics={"acc": 0.9, "top1": torch.tensor(0.8), "cm": matrix})
    hook.after_test_epoch(runner, metrics={"acc": 0.7, "names": ["a", "b"]})
    hook.after_val_epoch(runner, metrics=None)
    hub = runner.message_hub
    assert hub.get_scalar("val/acc").current() == 0.9
    assert hub.get_scalar("val/top1").current() == pytest.approx(0.8)
    assert hub.get_info("val/cm") is matrix
    assert hub.get_scalar("test/acc").current() == 0.7
    assert hub.get_info("test/names") == ["a", "b"]


def test_timer_puts_time_and_data_time_per_loop(runner):
    hook = IterTimerHook()
    hub = runner.message_hub
    hook.before_train(runner)
    hook.before_train_epoch(runner)
    for i in range(3):
        runner.iter = i
        hook.before_train_iter(runner, i)
        hook.after_train_iter(runner, i)
    hook.before_val_epoch(runner)
    hook.before_val_iter(runner, 0)
    hook.after_val_iter(runner, 0)
    hook.before_test_epoch(runner)
    hook.before_test_iter(runner, 0)
    hook.after_test_iter(runner, 0)
    for mode, count in (("train", 3), ("val", 1), ("test", 1)):
        times = hub.get_scalar(f"{mode}/time").data[0]
        data_times = hub.get_scalar(f"{mode}/data_time").data[0]
        assert len(times) == len(data_times) == count
        assert all(t >= d >= 0 for t, d in zip(times, data_times, strict=True))


def test_timer_eta_counts_the_iterations_left(runner, monkeypatch):
    clock = iter(range(100))
    monkeypatch.setattr(
        "treadle.runner.hooks.iter_timer_hook.time.perf_counter", lambda: next(clock) * 2.0
    )
    hook = IterTimerHook()
    runner.iter = 4  # a resumed run: its eta uses its own iterations only
    hook.before_train(runner)
    hook.before_train_epoch(runner)  # t = 0
    hook.before_train_iter(runner, 0)  # t = 2
    hook.after_train_iter(runner, 0)  # t = 4: 4 s for iteration 4
    # 7 iterations left (5..11) at 4 s each.
    assert runner.message_hub.get_info("eta") == pytest.approx(28.0)
    hook.before_val_epoch(runner)  # t = 6
    hook.before_val_iter(runner, 0)  # t = 8
    hook.after_val_iter(runner, 0)  # t = 10
    # The val loader has 4 batches of 2: 3 left at 4 s each.
    assert runner.message_hub.get_info("eta") == pytest.approx(12.0)
    hook.after_val_epoch(runner)
    assert hook.time_sec_test_val == 0.0


def test_timer_times_what_follows_a_pass_from_its_end(runner, monkeypatch):
    """The hook reads the clock once per call, as MMEngine's does: a test pass right after a
    val pass (no before_test_epoch) times its first batch from the val pass's end."""
    clock = iter(range(100))
    monkeypatch.setattr(
        "treadle.runner.hooks.iter_timer_hook.time.perf_counter", lambda: next(clock)
    )
    hook = IterTimerHook()
    hook.before_val_epoch(runner)  # t = 0
    for i in range(2):
        hook.before_val_iter(runner, i)
        hook.after_val_iter(runner, i)  # 2 s each
    hook.after_val_epoch(runner)  # t = 5: the pass took 5 s
    assert runner.message_hub.get_info("val_time") == 5
    for i in range(2):
        hook.before_test_iter(runner, i)
        hook.after_test_iter(runner, i)  # 2 s each, the first from t = 5
    assert hook.time_sec_test_val == 4
    # The test loader has 4 batches: 2 left at 2 s each.
    assert runner.message_hub.get_info("eta") == pytest.approx(4.0)
