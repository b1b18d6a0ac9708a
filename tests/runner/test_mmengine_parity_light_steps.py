"""Hooks that implement only ``after_train_iter`` and keep Hook's own ``next_train_iter`` (as most
user hooks do) read the message hub as MMEngine 0.10.7 shows it, at every priority. treadle
calls them at every step, but not RuntimeInfoHook and IterTimerHook where no other hook is due
(a "light" step): the hub's pending writer writes their work when a hook reads, as far as each
went at the reading hook's place. Checked: every scalar's history length and last value
(timings: length only), the runtime info, and at which reads the ETA changed, in the same toy
run (validation, a checkpoint, a learning rate step by epoch) on both Runners.

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mmengine")

import torch
from hub_parity_toy import Data, make_metric, make_model, side, snapshot
from mmengine_globals import mmengine_globals_restored


@pytest.fixture(autouse=True)
def _mmengine_state_put_back():
    with mmengine_globals_restored():
        yield


@pytest.fixture
def trusted_torch_load(monkeypatch):
    # MMEngine 0.10.7 loads its own checkpoints with torch.load's defaults (see hub_steps).
    load = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: load(*a, **{**k, "weights_only": False}))


# The toy run (data, model, metric) is tests/support/hub_parity_toy.py, shared with hub_steps.
# VERY_HIGH and NORMAL: registered after RuntimeInfoHook and IterTimerHook, so called after them.
PRIORITIES = ("HIGHEST", "VERY_HIGH", "HIGH", "ABOVE_NORMAL", "NORMAL", "LOW", "LOWEST")


def make_reader(hook_base: type, records: list, priority: str, every: int | None = None):
    class Reader(hook_base):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            hub = runner.message_hub
            records.append(
                ((priority, every, runner.iter), snapshot(runner), hub.runtime_info.get("eta"))
            )

    Reader.priority = priority
    if every is not None:
        # Asked when due (treadle): the steps where it runs are not light.
        def next_train_iter(self, runner, iteration, batch_idx):
            return iteration + (-(iteration + 1) % every)

        Reader.next_train_iter = next_train_iter
    return Reader()


def run(name: str, work_dir: Path, by_epoch: bool, resume_from: str | None = None) -> list:
    parts = side(name)
    records: list = []
    hooks = [make_reader(parts["Hook"], records, priority) for priority in PRIORITIES]
    hooks.append(make_reader(parts["Hook"], records, "LOW", every=7))
    loader = dict(dataset=Data(), batch_size=4, num_workers=0,
                  collate_fn=dict(type="default_collate"),
                  sampler=dict(type="DefaultSampler", shuffle=True))  # fmt: skip
    if by_epoch:
        train_cfg = dict(by_epoch=True, max_epochs=4, val_interval=2)
        checkpoint = dict(type="CheckpointHook", interval=2)
    else:
        train_cfg = dict(by_epoch=False, max_iters=24, val_interval=10)
        checkpoint = dict(type="CheckpointHook", interval=10, by_epoch=False)
    extra = dict(load_from=resume_from, resume=True) if resume_from else {}
    # No scheduler stepping by iteration: it would be due at every step (no light step).
    scheduler = dict(type="MultiStepLR", milestones=[2], by_epoch=True) if by_epoch else None
    runner = parts["Runner"](
        model=make_model(parts["BaseModel"]),
        work_dir=str(work_dir),
        train_dataloader=loader,
        val_dataloader={**loader, "sampler": dict(type="DefaultSampler", shuffle=False)},
        val_evaluator=[make_metric(parts["BaseMetric"])],
        train_cfg=train_cfg,
        val_cfg=dict(),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1, momentum=0.9)),
        param_scheduler=scheduler,
        custom_hooks=hooks,
        default_hooks=dict(logger=dict(type="LoggerHook", interval=5), checkpoint=checkpoint),
        log_processor=dict(by_epoch=by_epoch),
        randomness=dict(seed=0),
        experiment_name=f"parity-light-{name}-{by_epoch}-{bool(resume_from)}",
        **extra,
    )
    runner.train()
    return records


def eta_changes(records: list) -> list:
    """Each read with, in place of the ETA, whether it changed since the read before: when
    the ETA was written, free of the timings (and of treadle's own estimate, which counts the
    validations and saves to come)."""
    signed, last = [], None
    for where, seen, eta in records:
        signed.append((where, seen, eta != last))
        last = eta
    return signed


def assert_same_reads(mine: list, theirs: list) -> None:
    """The same reads at the same places, the ETA compared by when it changed. MMEngine calls
    the interval reader at every step too: its reads where treadle does not call it are left
    out first."""
    called = {where for where, *_ in mine}
    theirs = [read for read in theirs if read[0] in called]
    assert [where for where, *_ in mine] == [where for where, *_ in theirs]
    for read, reference in zip(eta_changes(mine), eta_changes(theirs), strict=True):
        assert read == reference, read[0]


@pytest.mark.parametrize("by_epoch", [True, False], ids=["epoch-based", "iter-based"])
def test_after_train_iter_hooks_read_what_mmengine_shows(tmp_path, by_epoch, trusted_torch_load):
    theirs = run("mmengine", tmp_path / "mm", by_epoch)
    mine = run("treadle", tmp_path / "tr", by_epoch)
    assert len(theirs) == (len(PRIORITIES) + 1) * 24  # MMEngine calls every hook at each step
    assert_same_reads(mine, theirs)


@pytest.mark.parametrize("by_epoch", [True, False], ids=["epoch-based", "iter-based"])
def test_a_resumed_run_reads_what_mmengine_shows(tmp_path, by_epoch, trusted_torch_load):
    run("mmengine", tmp_path / "mm", by_epoch)
    run("treadle", tmp_path / "tr", by_epoch)
    name = "epoch_2.pth" if by_epoch else "iter_10.pth"
    theirs = run("mmengine", tmp_path / "mm2", by_epoch, str(tmp_path / "mm" / name))
    mine = run("treadle", tmp_path / "tr2", by_epoch, str(tmp_path / "tr" / name))
    assert_same_reads(mine, theirs)
