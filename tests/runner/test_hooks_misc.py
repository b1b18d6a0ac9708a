"""EmptyCacheHook, SyncBuffersHook (alone and in a gloo group of two), NaiveVisualizationHook,
PrepareTTAHook and build_runner_with_tta."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import gloo_group
import numpy as np
import pytest
import torch
from hooks_a_stub_runner import HooksStubRunner

from treadle.runner.hooks import (
    EmptyCacheHook,
    NaiveVisualizationHook,
    PrepareTTAHook,
    SyncBuffersHook,
    build_runner_with_tta,
)
from treadle.runner.hooks import empty_cache_hook as empty_cache_module
from treadle.runner.model import BaseTTAModel
from treadle.runner.registry import MODELS

SCENARIOS = Path(__file__).parent / "workers" / "hooks_a_scenarios.py"


@pytest.fixture
def runner(tmp_path):
    return HooksStubRunner(tmp_path)


def test_empty_cache_at_the_chosen_points(runner, monkeypatch):
    calls = []
    monkeypatch.setattr(empty_cache_module, "empty_accelerator_cache", lambda: calls.append(1))
    default = EmptyCacheHook()
    default.before_train_epoch(runner)
    default.after_train_iter(runner, 0)
    default.after_val_epoch(runner)
    assert len(calls) == 1
    everywhere = EmptyCacheHook(before_epoch=True, after_iter=True)
    everywhere.before_test_epoch(runner)
    everywhere.after_test_iter(runner, 0)
    everywhere.after_test_epoch(runner)
    assert len(calls) == 4


def test_empty_cache_on_a_cpu_machine_does_nothing():
    empty_cache_module.empty_accelerator_cache()


def test_sync_buffers_does_nothing_in_one_process(runner):
    hook = SyncBuffersHook()
    assert not hook.distributed
    before = runner.model.bn.running_mean.clone()
    hook.after_train_epoch(runner)
    hook.before_val_epoch(runner)
    assert torch.equal(runner.model.bn.running_mean, before)


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, 2, tmp_path_factory.mktemp("hooks_a"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_sync_buffers_averages_float_buffers_over_ranks(group):
    for rank in (0, 1):
        (mean, var), mean_at_val, tracked = group(rank, "scenario_after_train_epoch")
        assert mean == [0.5, 0.5]
        assert var == [1.5, 1.5]
        # Not averaged again for the validation right after the epoch.
        assert mean_at_val == [10.0 * rank] * 2
        assert tracked == 5
        assert group(rank, "scenario_val_alone") == [0.5, 0.5]


def sample(**fields):
    return SimpleNamespace(get=lambda key, default=None: fields.get(key, default), **fields)


def test_naive_visualization_draws_each_test_image(runner):
    hook = NaiveVisualizationHook(interval=2)
    image = torch.full((3, 4, 6), 0.5)
    data_batch = {
        "inputs": [image, image],
        "data_samples": [
            sample(
                img_path="/data/a.png",
                ori_shape=(8, 12),
                img_norm_cfg=dict(mean=[100] * 3, std=[10] * 3),
            ),
            sample(ori_shape=(4, 6)),
        ],
    }
    hook.after_test_iter(runner, 0, data_batch, outputs=["p0", "p1"])
    assert runner.visualizer.calls == []  # batch 1 of every 2
    hook.after_test_iter(runner, 1, data_batch, outputs=["p0", "p1"])
    (m0, args0, _), (m1, args1, _) = runner.visualizer.calls
    assert m0 == m1 == "add_datasample"
    assert args0[0] == "a.png" and args1[0] == "test_1_1"
    assert args0[1].shape == (8, 12, 3) and args0[1].dtype == np.uint8
    assert int(args0[1][0, 0, 0]) == 105  # 0.5 * std + mean
    assert args1[1].shape == (4, 6, 3)
    assert args0[2:] == ("p0", True, True)


def test_naive_visualization_records_the_graph_before_training(runner):
    NaiveVisualizationHook().before_train(runner)
    assert runner.visualizer.calls == [("add_graph", (runner.model, None), {})]


def test_naive_visualization_refuses_a_bad_interval():
    with pytest.raises(ValueError, match="interval must be a positive int, got 0"):
        NaiveVisualizationHook(interval=0)


@MODELS.register_module(name="HooksAToyTTA", force=True)
class ToyTTA(BaseTTAModel):
    def merge_preds(self, data_samples_list):
        return [sum(views) for views in data_samples_list]


class Doubler(torch.nn.Module):
    def test_step(self, data):
        return [2 * x for x in data["inputs"]]


def test_prepare_tta_wraps_the_model_before_testing():
    cfg = dict(type="HooksAToyTTA")
    hook = PrepareTTAHook(tta_cfg=cfg)
    model = Doubler()
    runner = SimpleNamespace(model=model)
    hook.before_test(runner)
    assert isinstance(runner.model, ToyTTA) and runner.model.module is model
    assert runner.model.test_step({"inputs": [[1.0], [3.0]]}) == [8.0]
    assert cfg == dict(type="HooksAToyTTA")  # the user's config is left as written


def test_prepare_tta_needs_a_dict():
    with pytest.raises(TypeError, match=r"tta_cfg must be a dict .* got str"):
        PrepareTTAHook(tta_cfg="HooksAToyTTA")


def test_build_runner_with_tta_needs_the_tta_keys():
    with pytest.raises(KeyError, match="no tta_model and no tta_pipeline"):
        build_runner_with_tta(dict(model=dict(type="X")))


def test_build_runner_with_tta_sets_the_pipeline_and_the_hook():
    from treadle.runner.registry import RUNNERS

    built = []

    @RUNNERS.register_module(name="HooksAFakeRunner", force=True)
    class FakeRunner:
        def __init__(self, cfg):
            self.cfg = cfg
            self.hooks = []
            built.append(self)

        @classmethod
        def from_cfg(cls, cfg):
            return cls(cfg)

        def register_hook(self, hook):
            self.hooks.append(hook)

    cfg = dict(
        runner_type="HooksAFakeRunner",
        tta_model=dict(type="HooksAToyTTA"),
        tta_pipeline=["flip"],
        test_dataloader=dict(dataset=dict(pipeline=["plain"])),
    )
    runner = build_runner_with_tta(cfg)
    assert runner is built[0]
    assert runner.cfg["test_dataloader"]["dataset"]["pipeline"] == ["flip"]
    assert isinstance(runner.hooks[0], PrepareTTAHook)
    assert cfg["test_dataloader"]["dataset"]["pipeline"] == ["plain"]
