"""Hook (every point, the shared _before/_after methods, the helpers, get_triggered_stages) and
hook priorities (Priority, get_priority)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from runner_toy_hooks import MMENGINE_STAGES

from treadle.runner.hooks import Hook, Priority, get_priority


class Recorder(Hook):
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def _before_epoch(self, runner, mode="train"):
        self.calls.append(("before_epoch", mode))

    def _after_epoch(self, runner, mode="train"):
        self.calls.append(("after_epoch", mode))

    def _before_iter(self, runner, batch_idx, data_batch=None, mode="train"):
        self.calls.append(("before_iter", mode, batch_idx, data_batch))

    def _after_iter(self, runner, batch_idx, data_batch=None, outputs=None, mode="train"):
        self.calls.append(("after_iter", mode, batch_idx, data_batch, outputs))


def test_stages_and_default_priority_are_mmengines():
    assert Hook.stages == MMENGINE_STAGES
    assert Hook.priority == "NORMAL"
    hook = Hook()
    for stage in MMENGINE_STAGES:
        assert callable(getattr(hook, stage))


def test_every_base_point_does_nothing():
    hook = Hook()
    runner = SimpleNamespace()
    for stage in ("before_run", "after_run", "before_train", "after_train", "before_val"):
        assert getattr(hook, stage)(runner) is None
    hook.before_save_checkpoint(runner, {})
    hook.after_load_checkpoint(runner, {})
    hook.after_val_epoch(runner, metrics={"acc": 1.0})
    hook.after_train_iter(runner, 0, data_batch={"x": 1}, outputs={"loss": 1.0})


@pytest.mark.parametrize("mode", ["train", "val", "test"])
def test_mode_points_forward_to_the_shared_methods(mode):
    hook = Recorder()
    runner = SimpleNamespace()
    getattr(hook, f"before_{mode}_epoch")(runner)
    getattr(hook, f"before_{mode}_iter")(runner, 3, data_batch="batch")
    getattr(hook, f"after_{mode}_iter")(runner, 3, data_batch="batch", outputs="out")
    if mode == "train":
        hook.after_train_epoch(runner)
    else:
        getattr(hook, f"after_{mode}_epoch")(runner, metrics={"acc": 1})
    assert hook.calls == [
        ("before_epoch", mode),
        ("before_iter", mode, 3, "batch"),
        ("after_iter", mode, 3, "batch", "out"),
        ("after_epoch", mode),
    ]


def test_triggered_stages_follow_overrides_in_stage_order():
    assert Hook().get_triggered_stages() == []
    stages = Recorder().get_triggered_stages()
    assert set(stages) == {
        f"{when}_{mode}_{what}"
        for when in ("before", "after")
        for mode in ("train", "val", "test")
        for what in ("epoch", "iter")
    }
    assert stages == [stage for stage in MMENGINE_STAGES if stage in stages]

    class OnlyRun(Hook):
        def after_run(self, runner):
            pass

        def before_save_checkpoint(self, runner, checkpoint):
            pass

    assert OnlyRun().get_triggered_stages() == ["before_save_checkpoint", "after_run"]


def test_interval_helpers():
    hook = Hook()
    runner = SimpleNamespace(epoch=3, iter=9, max_epochs=4, max_iters=10)
    assert hook.every_n_epochs(runner, 2)  # epoch 4 (1-based) ends
    assert not hook.every_n_epochs(runner, 3)
    assert hook.every_n_epochs(runner, 3, start=1)
    assert not hook.every_n_epochs(runner, 0)
    assert not hook.every_n_epochs(runner, 2, start=6)  # before start
    assert hook.every_n_train_iters(runner, 5)
    assert hook.every_n_train_iters(runner, 4, start=2)
    assert not hook.every_n_train_iters(runner, -1)
    assert hook.every_n_inner_iters(5, 3)
    assert not hook.every_n_inner_iters(5, 4)
    assert not hook.every_n_inner_iters(5, 0)
    assert hook.end_of_epoch([0, 1, 2], 2)
    assert not hook.end_of_epoch([0, 1, 2], 1)
    assert hook.is_last_train_epoch(runner)
    assert hook.is_last_train_iter(runner)
    runner.epoch, runner.iter = 2, 8
    assert not hook.is_last_train_epoch(runner)
    assert not hook.is_last_train_iter(runner)


def test_priority_levels_are_mmengines():
    assert {level.name: level.value for level in Priority} == {
        "HIGHEST": 0,
        "VERY_HIGH": 10,
        "HIGH": 30,
        "ABOVE_NORMAL": 40,
        "NORMAL": 50,
        "BELOW_NORMAL": 60,
        "LOW": 70,
        "VERY_LOW": 90,
        "LOWEST": 100,
    }


def test_get_priority_accepts_numbers_names_and_levels():
    assert get_priority(0) == 0
    assert get_priority(100) == 100
    assert get_priority("very_high") == 10
    assert get_priority("LOWEST") == 100
    assert get_priority(Priority.BELOW_NORMAL) == 60


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        (-1, ValueError, "between 0 and 100, got -1"),
        (101, ValueError, "between 0 and 100, got 101"),
        ("VERYHIGH", ValueError, "unknown hook priority 'VERYHIGH'; the levels are HIGHEST"),
        (True, TypeError, "got bool: True"),
        (1.5, TypeError, "got float: 1.5"),
    ],
)
def test_get_priority_refuses_bad_values(value, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(")):
        get_priority(value)


def test_builtin_hook_priorities():
    from treadle.runner import hooks

    expected = {
        "RuntimeInfoHook": "VERY_HIGH",
        "IterTimerHook": "NORMAL",
        "DistSamplerSeedHook": "NORMAL",
        "ParamSchedulerHook": "LOW",
        "SyncBuffersHook": "NORMAL",
        "EmptyCacheHook": "NORMAL",
        "NaiveVisualizationHook": "NORMAL",
        "EMAHook": "NORMAL",
        "ProfilerHook": "VERY_LOW",
        "NPUProfilerHook": "VERY_LOW",
        "EarlyStoppingHook": "LOWEST",
        "PrepareTTAHook": "NORMAL",
    }
    assert {name: getattr(hooks, name).priority for name in expected} == expected


def test_builtin_hooks_build_by_name():
    from treadle.runner.registry import HOOKS

    hook = HOOKS.build(dict(type="EmptyCacheHook", after_iter=True))
    assert type(hook).__module__ == "treadle.runner.hooks.empty_cache_hook"


def test_unknown_hook_type_names_the_closest():
    from treadle.runner.registry import HOOKS

    with pytest.raises(KeyError, match="EMAHook"):
        HOOKS.build(dict(type="EMAHok"))
