"""The hooks of part hooks-a against MMEngine 0.10's mmengine.hooks: the same priorities, hook
points, constructor arguments and triggered stages; the same decisions of EarlyStoppingHook;
the same message hub keys from RuntimeInfoHook and IterTimerHook; the same averages and
checkpoint contents from EMAHook.

Runs only where mmengine is installed: ``hatch run mmengine:pytest``.
"""

from __future__ import annotations

import copy
import inspect
import math
from types import SimpleNamespace

import pytest
import torch

mm_hooks = pytest.importorskip("mmengine.hooks")
mm_priority = pytest.importorskip("mmengine.runner.priority")
mm_logging = pytest.importorskip("mmengine.logging")

from treadle.logging import MessageHub  # noqa: E402
from treadle.runner import hooks as tr_hooks  # noqa: E402

HOOKS_A = (
    "RuntimeInfoHook",
    "IterTimerHook",
    "DistSamplerSeedHook",
    "ParamSchedulerHook",
    "SyncBuffersHook",
    "EmptyCacheHook",
    "NaiveVisualizationHook",
    "EMAHook",
    "ProfilerHook",
    "NPUProfilerHook",
    "EarlyStoppingHook",
    "PrepareTTAHook",
)
# Constructor arguments of each hook, to build both sides alike.
ARGS = {"EarlyStoppingHook": dict(monitor="acc"), "PrepareTTAHook": dict(tta_cfg={})}
# Arguments treadle adds to MMEngine's (issue 20), with their defaults; the README lists each.
ADDED_ARGS: dict[str, dict] = {"ParamSchedulerHook": {"step_on_skipped": False}}


def test_priorities_are_the_same():
    assert [(p.name, p.value) for p in tr_hooks.Priority] == [
        (p.name, p.value) for p in mm_priority.Priority
    ]
    for value in (0, 37, 100, "low", "VERY_HIGH", *tr_hooks.Priority):
        mm_value = (
            mm_priority.Priority[value.name] if isinstance(value, tr_hooks.Priority) else value
        )
        assert tr_hooks.get_priority(value) == mm_priority.get_priority(mm_value)


def test_hook_points_are_the_same():
    assert tr_hooks.Hook.stages == mm_hooks.Hook.stages
    for stage in mm_hooks.Hook.stages:
        mm_params = list(inspect.signature(getattr(mm_hooks.Hook, stage)).parameters)
        assert list(inspect.signature(getattr(tr_hooks.Hook, stage)).parameters) == mm_params


@pytest.mark.parametrize("name", HOOKS_A)
def test_hooks_have_the_same_priority_and_arguments(name):
    ours, theirs = getattr(tr_hooks, name), getattr(mm_hooks, name)
    assert ours.priority == theirs.priority
    mm_params = {p.name: p.default for p in inspect.signature(theirs.__init__).parameters.values()}
    tr_params = {p.name: p.default for p in inspect.signature(ours.__init__).parameters.values()}
    # A hook without arguments may leave __init__ to object.
    if theirs.__init__ is object.__init__:
        mm_params = {"self": inspect.Parameter.empty}
    if ours.__init__ is object.__init__:
        tr_params = {"self": inspect.Parameter.empty}
    for added, default in ADDED_ARGS.get(name, {}).items():
        assert tr_params.pop(added) == default
    assert tr_params == mm_params


@pytest.mark.parametrize("name", [n for n in HOOKS_A if n != "NPUProfilerHook"])
def test_hooks_trigger_at_the_same_points(name):
    ours = getattr(tr_hooks, name)(**ARGS.get(name, {}))
    theirs = getattr(mm_hooks, name)(**ARGS.get(name, {}))
    extra = set()
    if name == "ProfilerHook":
        # Deliberate: a run that ends before the profiled span closes the profiler at after_run.
        extra = {"after_run"}
    if name == "EarlyStoppingHook":
        # Deliberate: before_train tells training from runner.val(), which it leaves alone.
        extra = {"before_train"}
    if name == "IterTimerHook":
        # Deliberate (issue 20): validation inside training is timed as a whole, and left out
        # of the train clock, for the ETA.
        extra = {"before_val", "after_val", "after_train"}
    assert set(ours.get_triggered_stages()) == set(theirs.get_triggered_stages()) | extra


def test_helpers_agree():
    ours, theirs = tr_hooks.Hook(), mm_hooks.Hook()
    for epoch in range(-1, 5):
        for n in (-1, 0, 1, 2, 3):
            for start in (0, 1, 3):
                runner = SimpleNamespace(epoch=epoch, iter=epoch * 3, max_epochs=3, max_iters=9)
                assert ours.every_n_epochs(runner, n, start) == theirs.every_n_epochs(
                    runner, n, start
                )
                assert ours.every_n_train_iters(runner, n, start) == theirs.every_n_train_iters(
                    runner, n, start
                )
            assert ours.every_n_inner_iters(epoch, n) == theirs.every_n_inner_iters(epoch, n)
        assert ours.is_last_train_epoch(runner) == theirs.is_last_train_epoch(runner)
        assert ours.end_of_epoch(range(3), epoch) == theirs.end_of_epoch(range(3), epoch)


SEQUENCES = [
    ("acc", {}, [0.5, 0.55, 0.7, 0.75, 0.72, 0.9, 0.1, 0.1, 0.1, 0.1, 0.1]),
    ("loss", dict(min_delta=0.0, patience=1), [1.0, 0.8, 0.9]),
    ("acc", dict(stopping_threshold=0.9), [0.5, 0.95]),
    ("loss", {}, [1.0, math.nan]),
    ("loss", dict(check_finite=False, patience=3), [1.0, math.inf, 0.5, 0.6, 0.7, 0.8]),
    ("mIoU", dict(min_delta=0.01, patience=2), [10, 10.005, 10.02, 10.02, 10.0]),
]


@pytest.mark.parametrize(("monitor", "kwargs", "values"), SEQUENCES)
def test_early_stopping_decides_the_same(monitor, kwargs, values):
    results = []
    for module in (tr_hooks, mm_hooks):
        hook = module.EarlyStoppingHook(monitor, **kwargs)
        runner = SimpleNamespace(
            train_loop=SimpleNamespace(stop_training=False), logger=SimpleNamespace(info=print)
        )
        stopped = None
        for index, value in enumerate(values):
            hook.after_val_epoch(runner, {monitor: value})
            if runner.train_loop.stop_training:
                stopped = index
                break
        results.append((hook.rule, stopped, hook.best_score, hook.wait_count))
    assert results[0] == results[1]


def _stub_runner(hub):
    model = torch.nn.Linear(2, 2)
    loader = SimpleNamespace(dataset=SimpleNamespace(metainfo={"classes": ["a"]}))
    return SimpleNamespace(
        message_hub=hub,
        cfg=SimpleNamespace(pretty_text="a = 1\n"),
        seed=3,
        experiment_name="exp",
        epoch=1,
        iter=5,
        max_epochs=3,
        max_iters=12,
        train_dataloader=loader,
        val_dataloader=range(4),
        test_dataloader=range(4),
        optim_wrapper=SimpleNamespace(get_lr=lambda: {"lr": [0.1]}),
        model=model,
    )


def _drive_runtime_and_timer(module, hub):
    runner = _stub_runner(hub)
    info, timer = module.RuntimeInfoHook(), module.IterTimerHook()
    info.before_run(runner)
    for hook in (info, timer):
        hook.before_train(runner)
        hook.before_train_epoch(runner)
        hook.before_train_iter(runner, 0, None)
        hook.after_train_iter(runner, 0, None, {"loss": torch.tensor(0.5), "acc": 1.0})
        hook.before_val(runner)
        hook.before_val_epoch(runner)
        hook.before_val_iter(runner, 0, None)
        hook.after_val_iter(runner, 0, None, [])
    info.after_val_epoch(runner, {"acc": 0.9, "names": ["a"]})
    loop_stage_in_train = hub.get_info("loop_stage")
    info.after_val(runner)
    return (
        set(hub.log_scalars),
        set(hub.runtime_info) - {"mmengine_version", "treadle_version"},
        loop_stage_in_train,
        hub.get_info("loop_stage"),
        {k: hub.get_scalar(k).current() for k in ("train/lr", "train/loss", "val/acc")},
    )


def test_runtime_info_and_timer_publish_the_same_keys():
    ours = _drive_runtime_and_timer(tr_hooks, MessageHub.get_instance("parity_hooks_a"))
    theirs = _drive_runtime_and_timer(
        mm_hooks, mm_logging.MessageHub.get_instance("parity_hooks_a")
    )
    assert ours == theirs


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)
        self.bn = torch.nn.BatchNorm1d(2)


@pytest.mark.parametrize("kwargs", [dict(momentum=0.3), dict(momentum=0.3, begin_iter=3)])
def test_ema_gives_the_same_average_and_checkpoint(kwargs):
    results = []
    for module in (tr_hooks, mm_hooks):
        torch.manual_seed(0)
        model = Net()
        runner = SimpleNamespace(model=model, iter=0, epoch=0, max_iters=10, max_epochs=1)
        hook = module.EMAHook(**kwargs)
        hook.before_run(runner)
        hook.before_train(runner)
        generator = torch.Generator().manual_seed(1)
        seen = []
        for i in range(6):
            runner.iter = i
            with torch.no_grad():
                for p in model.parameters():
                    p.add_(torch.randn(p.shape, generator=generator))
            hook.after_train_iter(runner, i, None, None)
            if i in (1, 4):
                hook.before_val_epoch(runner)
                seen.append(copy.deepcopy(model.state_dict()))
                hook.after_val_epoch(runner, {})
        checkpoint = {"state_dict": copy.deepcopy(model.state_dict())}
        hook.before_save_checkpoint(runner, checkpoint)
        results.append((seen, checkpoint))
    (ours_seen, ours_ckpt), (mm_seen, mm_ckpt) = results
    for ours, theirs in zip(ours_seen, mm_seen, strict=True):
        for key in theirs:
            torch.testing.assert_close(ours[key], theirs[key], rtol=1e-6, atol=1e-6)
    assert set(ours_ckpt) == set(mm_ckpt)
    for part in ("state_dict", "ema_state_dict"):
        assert set(ours_ckpt[part]) == set(mm_ckpt[part])
        for key, value in mm_ckpt[part].items():
            torch.testing.assert_close(ours_ckpt[part][key], value, rtol=1e-6, atol=1e-6)
