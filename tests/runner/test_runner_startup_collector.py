"""The Runner builds itself and prepares a training with automatic garbage collection paused,
and gives the caller's collector back as it was (issue 42: a training script's first step as
fast as a plain PyTorch loop). What the caller observes afterwards, after a run and after an
error, is what it had: ``gc.isenabled()``, the thresholds, the frozen objects; the train loop
and forked DataLoader workers collect as usual; garbage made during the pause is still
collected.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest
import torch
from runner_toy_model import ToyDataset, toy_cfg, toy_iter_cfg
from torch.utils.data import DataLoader

from treadle.runner.hooks import Hook
from treadle.runner.runner import Runner
from treadle.runner.runner.startup_collector import StartupCollectorPause, paused_collector


class _Cycle:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


class CollectorProbe(Hook):
    """Records ``gc.isenabled()`` where a hook is called; leaves a cycle of garbage at
    ``before_run`` (inside the pause) and keeps a weak reference to it."""

    def __init__(self, fail_at: str | None = None) -> None:
        self.seen: dict[str, bool] = {}
        self.fail_at = fail_at
        self.garbage: weakref.ref | None = None

    def _note(self, point: str) -> None:
        self.seen.setdefault(point, gc.isenabled())
        if point == self.fail_at:
            raise RuntimeError(f"probe fails at {point}")

    def before_run(self, runner) -> None:
        self.garbage = weakref.ref(_Cycle())
        self._note("before_run")

    def before_train(self, runner) -> None:
        self._note("before_train")

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
        self._note("after_train_iter")


@pytest.fixture
def collector() -> Iterator[None]:
    """The test's own thresholds; whatever a test does, the collector is put back after it.
    Distinct from the defaults and no lower: late in a long test session the process holds
    millions of objects, and a low threshold would run a full collection over them every few
    thousand allocations."""
    thresholds = gc.get_threshold()
    enabled = gc.isenabled()
    gc.set_threshold(1234, 56, 78)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
        if enabled:
            gc.enable()
        else:
            gc.disable()


def _state() -> tuple[bool, tuple[int, int, int], int]:
    return gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()


def test_train_gives_the_collector_back_as_the_caller_had_it(tmp_path, collector):
    gc.enable()
    probe = CollectorProbe()
    runner = Runner(**toy_cfg(tmp_path, custom_hooks=[probe]))
    assert _state() == (True, (1234, 56, 78), 0)  # after construction: as before it
    runner.train()
    assert _state() == (True, (1234, 56, 78), 0)
    # Paused while the runner prepared the training; on as usual in the loop.
    assert probe.seen == dict(before_run=False, before_train=True, after_train_iter=True)


def test_from_cfg_gives_the_collector_back(tmp_path, collector):
    from treadle.config import Config

    gc.enable()
    Runner.from_cfg(Config(toy_cfg(tmp_path))).train()
    assert _state() == (True, (1234, 56, 78), 0)


def test_garbage_made_while_paused_is_still_collected(tmp_path, collector):
    gc.enable()
    probe = CollectorProbe()
    Runner(**toy_cfg(tmp_path, custom_hooks=[probe])).train()
    gc.collect()
    assert probe.garbage is not None and probe.garbage() is None


def test_a_caller_with_the_collector_off_keeps_it_off(tmp_path, collector):
    gc.disable()
    probe = CollectorProbe()
    Runner(**toy_cfg(tmp_path, custom_hooks=[probe])).train()
    assert _state() == (False, (1234, 56, 78), 0)
    assert probe.seen == dict(before_run=False, before_train=False, after_train_iter=False)


def test_the_callers_frozen_objects_stay_frozen_and_none_are_added(tmp_path, collector):
    gc.enable()
    gc.freeze()  # as the `treadle` command does after building the runner
    frozen = gc.get_freeze_count()
    Runner(**toy_cfg(tmp_path)).train()
    enabled, thresholds, still_frozen = _state()
    assert (enabled, thresholds) == (True, (1234, 56, 78))
    # None thawed (0), none added (more); a frozen object that dies leaves the count.
    assert 0.99 * frozen < still_frozen <= frozen


@pytest.mark.parametrize("fail_at", ["before_run", "before_train", "after_train_iter"])
def test_an_error_inside_train_gives_the_collector_back(tmp_path, collector, fail_at):
    gc.enable()
    runner = Runner(**toy_cfg(tmp_path, custom_hooks=[CollectorProbe(fail_at=fail_at)]))
    with pytest.raises(RuntimeError, match=f"probe fails at {fail_at}"):
        runner.train()
    assert _state() == (True, (1234, 56, 78), 0)


def test_an_error_while_building_gives_the_collector_back(tmp_path, collector):
    gc.enable()
    with pytest.raises(KeyError, match="NoSuchModel"):
        Runner(**toy_cfg(tmp_path, model=dict(type="NoSuchModel")))
    assert _state() == (True, (1234, 56, 78), 0)


class CollectorInWorker(ToyDataset):
    """ToyDataset whose targets say whether the process reading them collects (1.0) or not."""

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        sample = super().__getitem__(index)
        sample["data_samples"] = torch.tensor(float(gc.isenabled()))
        return sample


class FirstBatch(Hook):
    def __init__(self) -> None:
        self.targets: list[float] = []

    def before_train_iter(self, runner, batch_idx, data_batch=None) -> None:
        self.targets.extend(float(t) for t in data_batch["data_samples"])


def test_workers_forked_while_paused_collect_as_usual(tmp_path, collector):
    # The iteration-based loop starts its DataLoader's workers when it is built, inside the
    # pause: the forked workers must not inherit it.
    gc.enable()
    loader = DataLoader(
        CollectorInWorker(length=6),
        batch_size=3,
        num_workers=1,
        multiprocessing_context="fork",
    )
    batches = FirstBatch()
    cfg = toy_iter_cfg(
        tmp_path,
        train_dataloader=loader,
        train_cfg=dict(by_epoch=False, max_iters=2),
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        param_scheduler=None,
        custom_hooks=[batches],
    )
    Runner(**cfg).train()
    assert batches.targets == [1.0] * 6
    assert _state() == (True, (1234, 56, 78), 0)


def test_the_pause_keeps_what_code_inside_it_chose(collector):
    gc.enable()
    with StartupCollectorPause():
        gc.enable()  # code inside turned collection on: it stays on, nothing is moved
        gc.disable()
        gc.freeze()  # and froze objects: they stay frozen
    assert _state()[:2] == (True, (1234, 56, 78))
    assert gc.get_freeze_count() > 0


def test_a_pause_inside_a_pause_does_nothing(collector):
    gc.enable()
    outer = StartupCollectorPause().start()
    inner = StartupCollectorPause().start()
    inner.end()
    assert not gc.isenabled()  # still the outer one's
    outer.end()
    outer.end()  # twice is harmless
    assert _state() == (True, (1234, 56, 78), 0)


def test_paused_collector_keeps_the_signature_and_errors():
    @paused_collector
    def build(a: int, b: int = 2) -> int:
        """Doc."""
        if a < 0:
            raise ValueError("negative")
        return a + b

    assert build(1) == 3 and build.__doc__ == "Doc." and build.__name__ == "build"
    with pytest.raises(ValueError, match="negative"):
        build(-1)
    assert gc.isenabled()
