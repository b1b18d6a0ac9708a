"""RunnerTestCase: what setUp prepares, what tearDown puts back, setup_dist_env."""

import copy
import os

import pytest
import torch.distributed as torch_dist

from treadle.logging import MessageHub, MMLogger
from treadle.registry import DefaultScope
from treadle.runner.registry import DATASETS, METRICS, MODELS
from treadle.runner.testing import RunnerTestCase
from treadle.runner.testing.toys import ToyDataset, ToyMetric, ToyModel
from treadle.visual import Visualizer

DIST_KEYS = ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK")


class _Case(RunnerTestCase):
    def runTest(self):  # unittest needs a test method to make an instance
        pass


@pytest.fixture
def case():
    made = _Case()
    made.setUp()
    yield made
    made.tearDown()


def test_setup_registers_the_toys_and_two_configs(case):
    assert MODELS.get("ToyModel") is ToyModel
    assert DATASETS.get("ToyDataset") is ToyDataset
    assert METRICS.get("ToyMetric") is ToyMetric
    assert case.epoch_based_cfg.work_dir == case.temp_dir.name
    assert case.epoch_based_cfg.train_cfg == dict(by_epoch=True, max_epochs=2, val_interval=1)
    assert case.iter_based_cfg.train_cfg == dict(by_epoch=False, max_iters=12)
    assert case.iter_based_cfg.train_dataloader.sampler.type == "InfiniteSampler"
    assert case.iter_based_cfg.default_hooks.checkpoint.interval == 12
    # The iteration-based config is a copy: changing it leaves the epoch-based one alone.
    case.iter_based_cfg.model.type = "Other"
    assert case.epoch_based_cfg.model.type == "ToyModel"


def test_teardown_restores_registries_and_forgets_instances():
    class Mine:
        pass

    MODELS.register_module(module=Mine, name="ToyModel", force=True)
    try:
        made = _Case()
        made.setUp()
        assert MODELS.get("ToyModel") is ToyModel
        runner = made.build_runner(copy.deepcopy(made.epoch_based_cfg))
        runner.train()
        work_dir = made.temp_dir.name
        made.tearDown()
        assert MODELS.module_dict["ToyModel"] is Mine
        assert "ToyMetric" not in METRICS.module_dict
        assert "ToyDataset" not in DATASETS.module_dict
        assert not os.path.exists(work_dir)
        for manager in (MessageHub, Visualizer, DefaultScope):
            assert manager._instance_dict == {}
        assert MMLogger._instance_dict == {}
    finally:
        MODELS.module_dict.pop("ToyModel", None)


def test_experiment_names_are_unique_and_name_the_test(case):
    first, second = case.experiment_name, case.experiment_name
    assert first != second
    assert first.startswith("runTest_")
    runner = case.build_runner(copy.deepcopy(case.epoch_based_cfg))
    assert runner.experiment_name.startswith("runTest_")


def test_clear_work_dir_empties_it_after_a_run(case):
    runner = case.build_runner(copy.deepcopy(case.iter_based_cfg))
    runner.train()
    assert "iter_12.pth" in os.listdir(case.temp_dir.name)
    case.clear_work_dir()
    assert os.listdir(case.temp_dir.name) == []


def test_setup_dist_env_sets_a_free_port_and_teardown_restores(monkeypatch):
    monkeypatch.setenv("RANK", "5")
    monkeypatch.delenv("MASTER_PORT", raising=False)
    made = _Case()
    made.setUp()
    made.setup_dist_env()
    port = int(os.environ["MASTER_PORT"])
    assert port > 0 and made.dist_cfg["MASTER_PORT"] == port
    assert [os.environ[k] for k in ("MASTER_ADDR", "RANK", "WORLD_SIZE", "LOCAL_RANK")] == [
        "127.0.0.1",
        "0",
        "1",
        "0",
    ]
    # The class attribute is left alone: another test case starts from it again.
    assert RunnerTestCase.dist_cfg["MASTER_PORT"] == 29600
    made.tearDown()
    assert os.environ["RANK"] == "5"
    assert "MASTER_PORT" not in os.environ


def test_distributed_run_and_teardown_destroys_the_group(monkeypatch):
    # A distributed run sets them when unset; set here, they are undone after the test.
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MKL_NUM_THREADS", "1")
    made = _Case()
    made.setUp()
    try:
        made.setup_dist_env()
        cfg = copy.deepcopy(made.epoch_based_cfg)
        cfg.launcher = "pytorch"
        cfg.env_cfg = dict(dist_cfg=dict(backend="gloo"))
        runner = made.build_runner(cfg)
        runner.train()
        assert torch_dist.is_initialized()
    finally:
        made.tearDown()
    assert not torch_dist.is_initialized()
