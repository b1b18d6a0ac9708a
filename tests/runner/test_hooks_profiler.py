"""ProfilerHook (Chrome trace by iterations and by epoch, TensorBoard traces, the operator
table, closing at the end of a short run, bad arguments) and NPUProfilerHook's error."""

from __future__ import annotations

import json
import os

import pytest
import torch
from hooks_a_stub_runner import HooksStubRunner

from treadle.runner.hooks import NPUProfilerHook, ProfilerHook


@pytest.fixture
def runner(tmp_path):
    return HooksStubRunner(tmp_path)


def train(runner, hook, iters, epoch_end=False):
    hook.before_run(runner)
    for i in range(iters):
        runner.iter = i
        runner.model(torch.randn(4, 2)).sum().backward()
        hook.after_train_iter(runner, i, None, None)
    if epoch_end:
        hook.after_train_epoch(runner)
    hook.after_run(runner)


def test_chrome_trace_of_the_first_iterations(runner, tmp_path):
    path = tmp_path / "traces" / "trace.json"
    hook = ProfilerHook(by_epoch=False, profile_times=2, json_trace_path=str(path))
    train(runner, hook, 4)
    trace = json.loads(path.read_text())
    assert "traceEvents" in trace
    assert any("addmm" in event.get("name", "") for event in trace["traceEvents"])
    assert hook._closed


def test_chrome_trace_of_the_first_epoch(runner, tmp_path):
    path = tmp_path / "epoch.json"
    hook = ProfilerHook(json_trace_path=str(path))
    train(runner, hook, 2, epoch_end=True)
    assert path.exists()


def test_a_run_shorter_than_the_profile_still_writes_it(runner, tmp_path):
    path = tmp_path / "short.json"
    hook = ProfilerHook(by_epoch=False, profile_times=10, json_trace_path=str(path))
    train(runner, hook, 3)
    assert path.exists()


def test_export_chrome_trace_stops_and_writes_at_once(runner, tmp_path):
    """MMEngine's name for ending the profiled span; a subclass overriding it is called."""
    path = tmp_path / "now.json"
    hook = ProfilerHook(json_trace_path=str(path))
    hook.before_run(runner)
    runner.model(torch.randn(4, 2)).sum()
    hook._export_chrome_trace(runner)
    assert "traceEvents" in json.loads(path.read_text())
    hook.after_run(runner)  # already closed: nothing more

    calls = []

    class Custom(ProfilerHook):
        def _export_chrome_trace(self, runner):
            calls.append(runner.iter)
            super()._export_chrome_trace(runner)

    train(runner, Custom(by_epoch=False, profile_times=2), 3)
    assert calls == [1]


def test_tensorboard_traces_go_under_the_log_dir(runner):
    hook = ProfilerHook(
        by_epoch=False,
        profile_times=2,
        schedule=dict(wait=0, warmup=1, active=1, repeat=1),
        on_trace_ready=dict(type="tb_trace", dir_name="tb", worker_name="w0"),
    )
    train(runner, hook, 3)
    files = os.listdir(os.path.join(runner.log_dir, "tb"))
    assert any(name.startswith("w0") and name.endswith(".pt.trace.json") for name in files)


def test_log_trace_prints_the_operator_table(runner, capsys):
    hook = ProfilerHook(
        by_epoch=False, profile_times=1, on_trace_ready=dict(type="log_trace", row_limit=5)
    )
    train(runner, hook, 1)
    assert "Self CPU" in capsys.readouterr().out


def test_a_callable_handler_gets_the_profile(runner):
    seen = []
    hook = ProfilerHook(by_epoch=False, profile_times=1, on_trace_ready=seen.append)
    train(runner, hook, 1)
    assert len(seen) == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (dict(profile_times=0), ValueError, "profile_times must be at least 1, got 0"),
        (dict(profile_times=2), ValueError, "with by_epoch=True only the first epoch"),
        (dict(by_epoch=1), TypeError, "by_epoch must be True or False, got 1"),
        (dict(activity_with_cuda="yes"), TypeError, "activity_with_cuda must be True or False"),
        (dict(schedule=[1, 2]), TypeError, "schedule must be a dict"),
        (dict(on_trace_ready="tb"), TypeError, "on_trace_ready must be a callable, a dict or None"),
        (dict(on_trace_ready=dict(type="csv")), ValueError, "'log_trace' or 'tb_trace', got 'csv'"),
    ],
)
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        ProfilerHook(**kwargs)


def test_profile_longer_than_the_run_is_refused(runner):
    hook = ProfilerHook(by_epoch=False, profile_times=13)
    with pytest.raises(ValueError, match="profile_times=13 is more than the run's 12 iterations"):
        hook.before_run(runner)


def test_npu_profiler_says_it_needs_an_npu():
    from treadle.runner.registry import HOOKS

    assert HOOKS.get("NPUProfilerHook") is NPUProfilerHook
    with pytest.raises(RuntimeError, match=r"needs torch_npu \(pip install torch-npu\) and an NPU"):
        NPUProfilerHook(begin=0, end=2)


def test_parse_trace_config_gives_the_handler_as_mmengine(runner):
    # MMEngine's name; toolbox tests set on_trace_ready after building the hook, then call it.
    hook = ProfilerHook(on_trace_ready=None)
    assert hook._parse_trace_config(runner) is None

    def handler(profile):
        return None

    hook.on_trace_ready = handler
    assert hook._parse_trace_config(runner) is handler
    hook.on_trace_ready = dict(type="log_trace", sort_by="self_cpu_time_total", row_limit=10)
    assert callable(hook._parse_trace_config(runner))
    hook.on_trace_ready = dict(type="unknown")
    with pytest.raises(ValueError, match="type must be 'log_trace' or 'tb_trace', got 'unknown'"):
        hook._parse_trace_config(runner)
    hook.on_trace_ready = 0
    with pytest.raises(ValueError, match="must be a callable, a dict or None, got int"):
        hook._parse_trace_config(runner)
