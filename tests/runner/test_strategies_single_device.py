"""treadle.runner.strategies: BaseStrategy's shared parts and SingleDeviceStrategy, on one
process and in a 2-process gloo group (workers/strategy_scenarios.py)."""

from __future__ import annotations

import logging
from pathlib import Path

import gloo_group
import pytest
import torch
from runner_toys import FakeDDP, captured_log
from torch import nn

from treadle.runner.optim import MultiStepLR, OptimWrapper
from treadle.runner.registry import STRATEGIES
from treadle.runner.strategies import BaseStrategy, SingleDeviceStrategy

SCENARIOS = Path(__file__).parent / "workers" / "strategy_scenarios.py"


def wrapper_of(model: nn.Module) -> OptimWrapper:
    return OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))


def test_registered_and_built_by_name():
    strategy = STRATEGIES.build({"type": "SingleDeviceStrategy", "find_unused_parameters": True})
    assert isinstance(strategy, SingleDeviceStrategy)
    assert strategy.find_unused_parameters is True


def test_unknown_strategy_names_the_closest():
    with pytest.raises(KeyError, match="SingleDeviceStrategy"):
        STRATEGIES.build({"type": "SingleDeviceStrategi"})


def test_prepare_returns_what_it_was_given():
    strategy = SingleDeviceStrategy()
    model = nn.Linear(2, 1)
    assert strategy.prepare(model) is model
    wrapper = wrapper_of(model)
    assert strategy.prepare(model, optim_wrapper=wrapper) == (model, wrapper)
    schedulers = [MultiStepLR(wrapper, milestones=[1])]
    assert strategy.prepare(model, optim_wrapper=wrapper, param_scheduler=schedulers) == (
        model,
        wrapper,
        schedulers,
    )
    assert strategy.model is model and strategy.optim_wrapper is wrapper
    assert strategy.param_schedulers is schedulers
    assert (strategy.world_size, strategy.rank, strategy.distributed) == (1, 0, False)


def test_one_process_reverts_sync_batchnorm():
    model = SingleDeviceStrategy().prepare(nn.Sequential(nn.Linear(2, 2), nn.SyncBatchNorm(2)))
    assert not any(isinstance(m, nn.SyncBatchNorm) for m in model.modules())
    assert any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules())


def test_a_wrapped_model_is_kept_and_refuses_a_wrapper_cfg():
    from torch.nn.parallel import DataParallel

    wrapped = DataParallel(nn.Linear(2, 1))
    assert SingleDeviceStrategy().prepare(wrapped) is wrapped
    strategy = SingleDeviceStrategy(model_wrapper_cfg={"type": "MMDistributedDataParallel"})
    with pytest.raises(TypeError, match=r"already wrapped \(in a DataParallel\).*must be None"):
        strategy.prepare(wrapped)


def test_model_wrapper_cfg_must_be_a_dict():
    with pytest.raises(TypeError, match=r"model_wrapper_cfg must be a dict.*got str"):
        SingleDeviceStrategy(model_wrapper_cfg="MMDistributedDataParallel")


def test_no_sync_uses_the_model_context_when_it_has_one():
    fake = FakeDDP(nn.Linear(2, 1))
    strategy = SingleDeviceStrategy()
    strategy.prepare(fake)
    inputs = torch.ones(1, 2, device=next(fake.parameters()).device)  # prepare() moved it
    with strategy.no_sync():
        fake(inputs)
    fake(inputs)
    assert fake.synced == [False, True]
    with strategy.no_sync(nn.Linear(2, 1)):  # nothing to skip
        pass


def test_base_strategy_leaves_wrap_model_to_subclasses():
    with pytest.raises(NotImplementedError, match="BaseStrategy does not implement wrap_model"):
        BaseStrategy().prepare(nn.Linear(2, 1))


def test_setup_env_without_launcher_starts_no_group():
    strategy = SingleDeviceStrategy(dist_cfg={"backend": "gloo"})
    strategy.setup_env()
    assert strategy.launcher == "none" and not strategy.distributed


def test_save_and_load_a_dict_of_statefuls(tmp_path):
    torch.manual_seed(0)
    model = nn.Linear(2, 1)
    wrapper = wrapper_of(model)
    wrapper.update_params(model(torch.ones(3, 2)).sum())
    strategy = SingleDeviceStrategy()
    path = str(tmp_path / "states.pth")
    strategy.save({"model": model, "optimizer": wrapper, "step": 5}, path)
    assert torch.load(path, weights_only=True)["step"] == 5

    fresh = nn.Linear(2, 1)
    fresh_wrapper = wrapper_of(fresh)
    unused = strategy.load({"model": fresh, "optimizer": fresh_wrapper}, path)
    assert unused == ["step"]
    assert torch.equal(fresh.weight, model.weight)
    assert fresh_wrapper.optimizer.state_dict()["state"][0]["momentum_buffer"].tolist() == (
        wrapper.optimizer.state_dict()["state"][0]["momentum_buffer"].tolist()
    )


def test_load_reports_states_the_file_lacks(tmp_path):
    strategy = SingleDeviceStrategy()
    path = str(tmp_path / "states.pth")
    strategy.save({"model": nn.Linear(2, 1)}, path)
    with pytest.raises(KeyError, match=r"has no state for 'ema' \(it holds 'model'\)"):
        strategy.load({"model": nn.Linear(2, 1), "ema": nn.Linear(2, 1)}, path, strict=True)
    with captured_log() as log:
        strategy.load({"model": nn.Linear(2, 1), "ema": nn.Linear(2, 1)}, path)
    assert any("has no state for 'ema'" in m for m in log.at(logging.WARNING))


def test_load_refuses_a_file_that_is_not_a_dict(tmp_path):
    path = str(tmp_path / "list.pth")
    torch.save([1, 2], path)
    with pytest.raises(TypeError, match=r"list.pth holds a list, not a dict of states"):
        SingleDeviceStrategy().load({"model": nn.Linear(2, 1)}, path)


# -- a real process group -----------------------------------------------------------------


@pytest.fixture(scope="module")
def group(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, 2, tmp_path_factory.mktemp("strategy"))
    return lambda rank, name: gloo_group.scenario_value(results, rank, name)


def test_distributed_prepare_wraps_in_mmddp_and_averages_gradients(group):
    values = [group(rank, "scenario_prepare_wraps_in_ddp_on_cpu") for rank in range(2)]
    assert {v["type"] for v in values} == {"MMDistributedDataParallel"}
    assert all(v["optim_is_same"] and v["world_size"] == 2 for v in values)
    # Same start (rank 0's), same averaged gradient: the same weights on both ranks.
    assert values[0]["weight"] == values[1]["weight"]


def test_no_sync_keeps_gradients_local(group):
    values = [group(rank, "scenario_no_sync_skips_the_all_reduce") for rank in range(2)]
    assert values[0]["local"] == [[1.0, 1.0]] and values[1]["local"] == [[2.0, 2.0]]
    assert values[0]["synced"] == values[1]["synced"] == [[1.5, 1.5]]


def test_save_writes_on_rank_0_and_every_rank_loads_it(group):
    for rank in range(2):
        value = group(rank, "scenario_save_on_rank_0_load_everywhere")
        assert value == {"weight": [[3.0, 3.0]], "unused": []}
