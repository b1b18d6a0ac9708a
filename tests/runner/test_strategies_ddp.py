"""DDPStrategy: its arguments and errors in one process, and training in a real 2-process gloo
group (workers/ddp_strategy_scenarios.py) through FlexibleRunner and the plain Runner, which
gives the same weights as one process training on both ranks' batches together."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import gloo_group
import pytest
import torch
from runner_toy_model import ToyModel, toy_cfg, toy_two_optim_cfg
from runner_toys import on_the_cpu
from torch import nn

from treadle.runner.registry import STRATEGIES
from treadle.runner.runner import Runner
from treadle.runner.strategies import DDPStrategy, SingleDeviceStrategy

SCENARIOS = Path(__file__).parent / "workers" / "ddp_strategy_scenarios.py"
WORLD_SIZE = 2


def load_scenarios():
    spec = importlib.util.spec_from_file_location("ddp_strategy_scenarios", SCENARIOS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def scenarios():
    return load_scenarios()


@pytest.fixture(scope="module")
def value(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, WORLD_SIZE, tmp_path_factory.mktemp("ddp"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def one_process_weights(scenarios, tmp_path, make_cfg=toy_cfg, **changes):
    """The weights one process reaches on the batches of both ranks together."""
    overrides = scenarios.train_overrides({"out_dir": str(tmp_path), "rank": "single"}, "one")
    overrides.update(launcher="none", train_dataloader=scenarios.loader(WORLD_SIZE * 3))
    overrides.update(changes)
    if make_cfg is toy_two_optim_cfg:
        overrides.pop("optim_wrapper")  # the two optimizers of toy_two_optim_cfg
    with on_the_cpu():  # as the group's ranks, which see no GPU
        runner = Runner(**make_cfg(**overrides))
        runner.train()
    return scenarios.weights_of(runner.model)


def assert_weights_close(weights, expected):
    assert set(weights) == set(expected)
    for name, tensor in weights.items():
        torch.testing.assert_close(torch.tensor(tensor), torch.tensor(expected[name]), msg=name)


# -- one process --------------------------------------------------------------------------


def test_ddp_strategy_is_registered_and_a_single_device_strategy():
    strategy = STRATEGIES.build(dict(type="DDPStrategy", sync_bn="torch"))
    assert isinstance(strategy, DDPStrategy)
    assert isinstance(strategy, SingleDeviceStrategy)  # as MMEngine's
    assert strategy.sync_bn == "torch" and strategy.model_wrapper is None


def test_ddp_strategy_takes_mmengines_base_arguments(tmp_path):
    strategy = DDPStrategy(
        model_wrapper=dict(type="MMDistributedDataParallel", find_unused_parameters=True),
        work_dir=str(tmp_path),
        dist_cfg=dict(backend="gloo"),
    )
    assert strategy.model_wrapper["find_unused_parameters"] is True
    assert strategy.dist_cfg == {"backend": "gloo"}


def test_unknown_model_wrapper_type_names_the_closest():
    with pytest.raises(
        KeyError, match=r"DDPStrategy\(model_wrapper=...\).*MMDistributedDataParalel"
    ):
        DDPStrategy(model_wrapper=dict(type="MMDistributedDataParalel"))
    with pytest.raises(KeyError, match="MMDistributedDataParallel"):
        DDPStrategy(model_wrapper=dict(type="MMDistributedDataParalel"))


def test_model_wrapper_must_be_a_dict():
    with pytest.raises(TypeError, match=r"DDPStrategy\(model_wrapper=...\) must be a dict"):
        DDPStrategy(model_wrapper="MMDistributedDataParallel")


def test_sync_bn_must_be_torch_or_mmcv():
    with pytest.raises(
        ValueError, match=r"sync_bn=...\) must be 'torch', 'mmcv' or None, got 'tf'"
    ):
        DDPStrategy(sync_bn="tf")


def test_convert_model_turns_batchnorm_into_syncbatchnorm():
    model = DDPStrategy(sync_bn="torch").convert_model(ToyModel(with_bn=True))
    assert isinstance(model.head.bn, nn.SyncBatchNorm)
    plain = DDPStrategy().convert_model(ToyModel(with_bn=True))
    assert type(plain.head.bn) is nn.BatchNorm1d


def test_wrap_model_without_a_process_group_says_how_to_launch():
    with pytest.raises(
        RuntimeError,
        match=r"DDPStrategy needs a process group.*torchrun --nproc-per-node N -m treadle.runner "
        r"train CONFIG --launcher pytorch.*SingleDeviceStrategy",
    ):
        DDPStrategy().prepare(nn.Linear(2, 1))


def test_an_already_wrapped_model_is_returned_as_it_is():
    wrapped = nn.DataParallel(nn.Linear(2, 1))
    assert DDPStrategy().wrap_model(wrapped) is wrapped


def test_setup_env_defaults_the_backend_to_the_devices(monkeypatch):
    calls = []
    monkeypatch.setattr("treadle.dist.init_dist", lambda launcher, **kw: calls.append(kw))
    monkeypatch.setattr("treadle.dist.is_distributed", lambda: False)
    DDPStrategy().setup_env(launcher="pytorch")
    expected = "nccl" if torch.cuda.is_available() else "gloo"
    assert calls == [{"backend": expected}]
    calls.clear()
    DDPStrategy(dist_cfg=dict(backend="mpi", timeout=30)).setup_env(launcher="pytorch")
    assert calls == [{"backend": "mpi", "timeout": 30}]


# -- a 2-process gloo group ---------------------------------------------------------------


def test_flexible_runner_ddp_gives_the_weights_of_one_process(value, scenarios, tmp_path):
    rank0, rank1 = (value(rank, "scenario_flexible_runner_ddp") for rank in range(WORLD_SIZE))
    assert rank0["strategy"] == "DDPStrategy"
    assert rank0["wrapper"] == "MMDistributedDataParallel"
    assert rank0["broadcast_buffers"] is False  # MMEngine's default wrapper config
    assert rank0["device_ids"] is None  # a CPU module: no device_ids (MMEngine passes one)
    assert rank0["iters"] == scenarios.EPOCHS * 2
    assert rank0["weights"] == rank1["weights"]
    assert_weights_close(rank0["weights"], one_process_weights(scenarios, tmp_path))


def test_gradient_accumulation_through_ddp_gives_the_weights_of_one_process(
    value, scenarios, tmp_path
):
    rank0, rank1 = (
        value(rank, "scenario_gradient_accumulation_skips_the_sync_between_updates")
        for rank in range(WORLD_SIZE)
    )
    # Every other iteration only accumulates: its backward runs without DDP's all-reduce.
    assert rank0["no_sync_at"] == [0, 2]
    assert rank0["weights"] == rank1["weights"]
    optim_wrapper = dict(
        type="OptimWrapper", optimizer=dict(type="SGD", lr=0.1), accumulative_counts=2
    )
    expected = one_process_weights(scenarios, tmp_path, optim_wrapper=optim_wrapper)
    assert_weights_close(rank0["weights"], expected)


def test_plain_runner_with_launcher_pytorch_gives_the_same_weights(value):
    plain = value(0, "scenario_runner_launcher_pytorch")
    assert plain["wrapper"] == "MMDistributedDataParallel"
    assert plain["weights"] == value(1, "scenario_runner_launcher_pytorch")["weights"]
    assert_weights_close(plain["weights"], value(0, "scenario_flexible_runner_ddp")["weights"])


def test_auto_scale_lr_uses_the_real_world_size(value):
    # base_batch_size 3 = the batch of one rank: 2 ranks double the learning rate.
    for rank in range(WORLD_SIZE):
        assert value(rank, "scenario_auto_scale_lr_uses_the_world_size") == pytest.approx(0.2)


def test_sync_bn_on_the_cpu_is_refused_with_the_reason(value):
    message = value(0, "scenario_sync_bn_on_the_cpu_is_refused")
    assert message == (
        "DDPStrategy(sync_bn='torch') needs the model on a GPU: SyncBatchNorm does not run on "
        "the CPU (this process trains on the CPU); leave sync_bn=None (cfg.sync_bn) on CPUs"
    )


def test_wrapper_arguments_reach_the_wrapper(value):
    report = value(0, "scenario_wrapper_arguments")
    assert report == dict(
        wrapper="MMDistributedDataParallel",
        norm="BatchNorm1d",
        find_unused=True,
        detect=True,
        broadcast_buffers=True,  # a model_wrapper given replaces the default config whole
        same=True,
    )


def test_the_default_wrapper_starts_without_deprecation_warnings(value):
    # torch 2.13 deprecates broadcast_buffers: the wrapper passes it as forward_sync_buffers.
    assert value(0, "scenario_default_wrapper_warns_nothing") == []


def test_model_wrapper_type_may_be_a_class(value):
    assert value(1, "scenario_model_wrapper_given_as_a_class") == "DistributedDataParallel"


def test_separate_ddp_through_the_strategy_gives_the_weights_of_one_process(
    value, scenarios, tmp_path
):
    rank0, rank1 = (
        value(rank, "scenario_separate_ddp_through_flexible_runner") for rank in range(WORLD_SIZE)
    )
    assert rank0["wrapper"] == "MMSeparateDistributedDataParallel"
    assert rank0["parts"] == {
        "data_preprocessor": "BaseDataPreprocessor",
        "a": "MMDistributedDataParallel",
        "b": "MMDistributedDataParallel",
    }
    assert rank0["weights"] == rank1["weights"]
    expected = one_process_weights(scenarios, tmp_path, toy_two_optim_cfg)
    assert_weights_close(rank0["weights"], expected)


def test_setup_distributed_keeps_an_existing_group(value):
    assert value(0, "scenario_no_process_group_is_not_needed_twice") == WORLD_SIZE
