"""What a hook reads in the message hub at each training step is what MMEngine 0.10.7 shows
there, whichever hooks are due: RuntimeInfoHook writes the learning rate and the iteration in
``before_train_iter`` (priority VERY_HIGH) and the step's outputs in ``after_train_iter``;
IterTimerHook (NORMAL) writes ``data_time`` before and ``time`` after. So at iteration ``i``
a hook after both reads ``i + 1`` learning rates but ``i`` losses before the step, and ``i + 1``
of each after it; a hook of a higher priority than RuntimeInfoHook reads the previous step's
values before it."""

from __future__ import annotations

import pytest
from runner_toy_model import TOY_LOOPS, toy_cfg

from treadle.runner.hooks import Hook
from treadle.runner.runner import Runner

KEYS = ("train/lr", "train/loss", "train/time", "train/data_time")


class Probe(Hook):
    """Reads the hub at each call: the history length of each key, the lr and loss, 'iter'."""

    def __init__(self, priority: str = "LOWEST", every: int | None = None) -> None:
        self.priority = priority
        self.every = every
        self.seen: list[tuple] = []

    def next_train_iter(self, runner, iteration, batch_idx):
        if self.every is None:
            return iteration
        return iteration + (-(iteration + 1) % self.every)

    def _read(self, runner, where: str) -> None:
        hub = runner.message_hub
        lengths = {
            key: len(hub.log_scalars[key].data[0]) if key in hub.log_scalars else 0 for key in KEYS
        }
        lr = hub.get_scalar("train/lr").current() if lengths["train/lr"] else None
        loss = hub.get_scalar("train/loss").current() if lengths["train/loss"] else None
        self.seen.append((where, runner.iter, lengths, lr, loss, hub.get_info("iter")))

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self._read(runner, "before")

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self._read(runner, "after")


class LossesAndLrs(Hook):
    """Every step's loss and learning rate, as the step used them."""

    priority = "LOWEST"

    def __init__(self) -> None:
        self.losses: list[float] = []
        self.lrs: list[float] = []

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.lrs.append(runner.optim_wrapper.get_lr()["lr"][0])

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.losses.append(float(outputs["loss"]))


def expected_lengths(where: str, i: int, priority: str) -> dict[str, int]:
    """MMEngine's history lengths at iteration ``i`` of a run that started at iteration 0."""
    before_runtime_info = priority == "HIGHEST"  # VERY_HIGH: RuntimeInfoHook
    before_timer = priority in ("HIGHEST", "HIGH", "ABOVE_NORMAL")  # NORMAL: IterTimerHook
    if where == "after":
        return {
            "train/lr": i + 1,
            "train/loss": i if before_runtime_info else i + 1,
            "train/time": i if before_timer else i + 1,
            "train/data_time": i + 1,
        }
    return {
        "train/lr": i if before_runtime_info else i + 1,
        "train/loss": i,
        "train/time": i,
        "train/data_time": i if before_timer else i + 1,
    }


def train(tmp_path, hooks, **cfg):
    cfg.setdefault("default_hooks", dict(logger=dict(type="LoggerHook", interval=5)))
    runner = Runner(**toy_cfg(tmp_path, custom_hooks=hooks, **cfg))
    runner.train()
    return runner


LOOPS = TOY_LOOPS


@pytest.mark.parametrize("cfg", LOOPS)
@pytest.mark.parametrize("priority", ["HIGHEST", "ABOVE_NORMAL", "NORMAL", "LOWEST"])
def test_a_hook_at_every_step_reads_one_entry_per_step(tmp_path, cfg, priority):
    probe, record = Probe(priority), LossesAndLrs()
    train(tmp_path, [probe, record], **cfg)
    assert len(probe.seen) == 24  # 12 iterations, before and after
    for where, i, lengths, lr, loss, iteration in probe.seen:
        assert lengths == expected_lengths(where, i, priority), (where, i)
        lr_of = i if lengths["train/lr"] == i + 1 else i - 1
        if lr_of >= 0:
            assert lr == pytest.approx(record.lrs[lr_of]), (where, i)
        loss_of = lengths["train/loss"] - 1
        if loss_of >= 0:
            assert loss == pytest.approx(record.losses[loss_of]), (where, i)
        # RuntimeInfoHook writes 'iter' before the step: a hook before it reads the last one.
        assert iteration == (max(i - 1, 0) if where == "before" and priority == "HIGHEST" else i)


@pytest.mark.parametrize("cfg", LOOPS)
@pytest.mark.parametrize("priority", ["HIGHEST", "LOWEST"])
def test_a_hook_called_at_intervals_reads_every_skipped_step(tmp_path, cfg, priority):
    # Only it and the logger are due: RuntimeInfoHook and IterTimerHook skip the other steps.
    probe = Probe(priority, every=5)
    train(tmp_path, [probe], **cfg)
    called = sorted({i for _, i, *_ in probe.seen})
    assert {4, 9} <= set(called) and len(called) < 12
    for where, i, lengths, *_ in probe.seen:
        assert lengths == expected_lengths(where, i, priority), (where, i)


def test_the_warmup_lr_read_before_each_step_is_the_current_one(tmp_path):
    # The case of issue 29: LinearLR over 30 iterations, 60 steps, the lr read before each.
    class ReadLr(Hook):
        def __init__(self) -> None:
            self.read: list[float] = []
            self.used: list[float] = []

        def before_train_iter(self, runner, batch_idx, data_batch=None):
            self.read.append(runner.message_hub.get_scalar("train/lr").current())
            self.used.append(runner.optim_wrapper.get_lr()["lr"][0])

    hook = ReadLr()
    scheduler = dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=30)
    train(tmp_path, [hook], param_scheduler=scheduler,
          train_cfg=dict(by_epoch=False, max_iters=60, val_interval=60),
          log_processor=dict(by_epoch=False))  # fmt: skip
    assert len(hook.read) == 60
    assert hook.read == pytest.approx(hook.used)
    # MMEngine's LinearLR reaches the full lr at its last iteration (29): 30 distinct values.
    expected = [0.01 * (0.1 + 0.9 * min(i, 29) / 29) for i in range(60)]
    assert hook.read == pytest.approx(expected)


def test_the_lr_is_there_before_the_first_step(tmp_path):
    class FirstRead(Hook):
        read = None

        def before_train_iter(self, runner, batch_idx, data_batch=None):
            if self.read is None:
                hub = runner.message_hub
                self.read = (hub.get_scalar("train/lr").current(), hub.get_info("iter"),
                             hub.get_scalar("train/data_time").data[0])  # fmt: skip

    hook = FirstRead()
    train(tmp_path, [hook])
    lr, iteration, data_times = hook.read
    assert lr == pytest.approx(0.01)
    assert iteration == 0
    assert len(data_times) == 1


def test_a_resumed_run_goes_on_from_the_restored_histories(tmp_path):
    train(tmp_path, [], default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1)))
    probe = Probe("LOWEST")
    resumed = train(tmp_path, [probe], load_from=str(tmp_path / "epoch_1.pth"), resume=True,
                    default_hooks=dict(checkpoint=None))  # fmt: skip
    assert [i for where, i, *_ in probe.seen if where == "before"] == list(range(4, 12))
    for where, i, lengths, *_ in probe.seen:
        # The checkpoint of epoch 1 holds the histories of its 4 iterations.
        assert lengths == expected_lengths(where, i, "LOWEST"), (where, i)
    assert len(resumed.message_hub.get_scalar("train/loss").data[0]) == 12


def test_log_scalars_read_by_a_hook_between_log_lines_are_complete(tmp_path):
    class ReadAll(Hook):
        priority = "LOW"

        def __init__(self) -> None:
            self.lengths: list[dict[str, int]] = []

        def next_train_iter(self, runner, iteration, batch_idx):
            return iteration + (-(iteration + 1) % 3)

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            scalars = runner.message_hub.log_scalars
            self.lengths.append({key: len(scalars[key].data[0]) for key in KEYS})

    hook = ReadAll()
    train(tmp_path, [hook], default_hooks=dict(logger=dict(type="LoggerHook", interval=50)))
    assert hook.lengths == [dict.fromkeys(KEYS, n) for n in (3, 6, 9, 12)]
