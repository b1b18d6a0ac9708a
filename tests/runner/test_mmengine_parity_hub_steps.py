"""What a hook reads in the message hub at each training step, treadle against MMEngine 0.10.7:
the same toy run (LinearLR warm-up by iteration, validation, a checkpoint) on both Runners with
probing hooks of several priorities, one of them called only at intervals in treadle
(``next_train_iter``), reading every scalar's history length and last value (timings: length
only) and the runtime info before and after each step; a resumed run too. Also the val/test
log lines carry the same items in the same order.

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("mmengine")


import torch
from hub_parity_toy import Data, make_metric, make_model, side, snapshot
from mmengine_globals import mmengine_globals_restored


@pytest.fixture(autouse=True)
def _mmengine_state_put_back():
    # MMEngine's Runner runs in this process: its current scope, logger, hub and visualizer must
    # not reach the parity tests that run after these.
    with mmengine_globals_restored():
        yield


def make_probe(hook_base: type, records: list, name: str, priority: str, every: int | None):
    class Probe(hook_base):
        def before_train_iter(self, runner, batch_idx, data_batch=None):
            records.append(((name, "before", runner.iter), snapshot(runner)))

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            records.append(((name, "after", runner.iter), snapshot(runner)))

    Probe.priority = priority
    if every is not None:
        # MMEngine never asks; treadle calls the probe only where it (or another hook) is due.
        def next_train_iter(self, runner, iteration, batch_idx):
            return iteration + (-(iteration + 1) % every)

        Probe.next_train_iter = next_train_iter
    return Probe()


PROBES = (("highest", "HIGHEST", None), ("normal", "NORMAL", None),
          ("lowest", "LOWEST", None), ("every7", "NORMAL", 7))  # fmt: skip


def run(name: str, work_dir: Path, by_epoch: bool, resume_from: str | None = None) -> dict:
    parts = side(name)
    records: list = []
    hooks = [make_probe(parts["Hook"], records, *probe) for probe in PROBES]
    loader = dict(
        dataset=Data(),
        batch_size=4,
        num_workers=0,
        collate_fn=dict(type="default_collate"),
        sampler=dict(type="DefaultSampler", shuffle=True),
    )
    if by_epoch:
        train_cfg = dict(by_epoch=True, max_epochs=4, val_interval=2)
        checkpoint = dict(type="CheckpointHook", interval=2)
    else:
        train_cfg = dict(by_epoch=False, max_iters=24, val_interval=10)
        checkpoint = dict(type="CheckpointHook", interval=10, by_epoch=False)
    extra = dict(load_from=resume_from, resume=True) if resume_from else {}
    runner = parts["Runner"](
        model=make_model(parts["BaseModel"]),
        work_dir=str(work_dir),
        train_dataloader=loader,
        val_dataloader={**loader, "sampler": dict(type="DefaultSampler", shuffle=False)},
        test_dataloader={**loader, "sampler": dict(type="DefaultSampler", shuffle=False)},
        val_evaluator=[make_metric(parts["BaseMetric"])],
        test_evaluator=[make_metric(parts["BaseMetric"])],
        train_cfg=train_cfg,
        val_cfg=dict(),
        test_cfg=dict(),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1, momentum=0.9)),
        param_scheduler=dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=15),
        custom_hooks=hooks,
        default_hooks=dict(logger=dict(type="LoggerHook", interval=5), checkpoint=checkpoint),
        log_processor=dict(by_epoch=by_epoch),
        randomness=dict(seed=0),
        experiment_name=f"parity-hub-{name}-{by_epoch}-{bool(resume_from)}",
        **extra,
    )
    runner.train()
    runner.test()
    (log_file,) = (work_dir / runner.timestamp).glob("*.log")
    return {"records": records, "log": log_file.read_text().splitlines()}


def eval_line_items(lines: list[str]) -> list[list[str]]:
    """The item names of the val/test lines, in order (treadle's own val_time/test_time aside)."""
    found = []
    for line in lines:
        match = re.search(r"(Epoch|Iter)\((val|test)\)\s*(\[[^\]]*\])+\s+(.*)$", line)
        if match:
            names = re.findall(r"([\w/]+): ", match.group(4))
            found.append([n for n in names if n not in ("val_time", "test_time")])
    return found


def assert_same_reads(mine: list, theirs: list) -> None:
    reference = dict(theirs)
    assert len(reference) == len(theirs)
    for where, seen in mine:
        assert where in reference, f"treadle called {where} where MMEngine did not"
        assert seen == reference[where], where
    every_step = [where for where, _ in theirs if where[0] != "every7"]
    assert every_step == [where for where, _ in mine if where[0] != "every7"]


def checkpoint_of(work_dir: Path, by_epoch: bool) -> str:
    return str(work_dir / ("epoch_2.pth" if by_epoch else "iter_10.pth"))


@pytest.fixture
def trusted_torch_load(monkeypatch):
    # MMEngine 0.10.7 loads its own checkpoints (pickled HistoryBuffers) with torch.load's
    # defaults, which refuse them since torch 2.6: this test trusts the files it wrote.
    load = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: load(*a, **{**k, "weights_only": False}))


@pytest.mark.parametrize("by_epoch", [True, False], ids=["epoch-based", "iter-based"])
def test_hooks_read_what_mmengine_shows_at_every_step(tmp_path, by_epoch, trusted_torch_load):
    theirs = run("mmengine", tmp_path / "mm", by_epoch)
    mine = run("treadle", tmp_path / "tr", by_epoch)
    assert_same_reads(mine["records"], theirs["records"])
    assert eval_line_items(mine["log"]) == eval_line_items(theirs["log"])
    assert eval_line_items(theirs["log"])  # the pattern found them


@pytest.mark.parametrize("by_epoch", [True, False], ids=["epoch-based", "iter-based"])
def test_a_resumed_run_reads_what_mmengine_shows(tmp_path, by_epoch, trusted_torch_load):
    run("mmengine", tmp_path / "mm", by_epoch)
    run("treadle", tmp_path / "tr", by_epoch)
    theirs = run("mmengine", tmp_path / "mm2", by_epoch, checkpoint_of(tmp_path / "mm", by_epoch))
    mine = run("treadle", tmp_path / "tr2", by_epoch, checkpoint_of(tmp_path / "tr", by_epoch))
    assert_same_reads(mine["records"], theirs["records"])
