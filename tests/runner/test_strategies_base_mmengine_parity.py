"""treadle's SingleDeviceStrategy against MMEngine 0.10's: a checkpoint written by either
strategy's ``save_checkpoint`` resumes in the other (weights, optimizer, schedulers), with the
same keys, and ``prepare`` returns the same shapes of results.

Runs only where mmengine is installed: ``hatch run mmengine:pytest ...``.
"""

from __future__ import annotations

import pytest

pytest.importorskip("mmengine")

import torch
from mmengine._strategy import SingleDeviceStrategy as MMSingleDeviceStrategy
from mmengine.optim import MultiStepLR as MMMultiStepLR
from mmengine.optim import OptimWrapper as MMOptimWrapper
from torch import nn

from treadle.runner.optim import MultiStepLR, OptimWrapper
from treadle.runner.strategies import SingleDeviceStrategy


def model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))


def prepared(side: str, work_dir) -> tuple:
    net = model()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    if side == "mmengine":
        strategy = MMSingleDeviceStrategy(work_dir=str(work_dir))
        wrapper = MMOptimWrapper(optimizer)
        schedulers = [MMMultiStepLR(wrapper, milestones=[1], by_epoch=False)]
    else:
        strategy = SingleDeviceStrategy(work_dir=str(work_dir))
        wrapper = OptimWrapper(optimizer)
        schedulers = [MultiStepLR(wrapper, milestones=[1], by_epoch=False)]
    result = strategy.prepare(net, optim_wrapper=wrapper, param_scheduler=schedulers)
    return strategy, result


def step(strategy, times: int = 2) -> None:
    for _ in range(times):
        loss = strategy.model(torch.ones(4, 2)).sum()
        strategy.optim_wrapper.update_params(loss)
        for scheduler in strategy.param_schedulers:
            scheduler.step()


@pytest.mark.parametrize(("writer", "reader"), [("mmengine", "treadle"), ("treadle", "mmengine")])
def test_checkpoints_resume_across(writer, reader, tmp_path):
    source, _ = prepared(writer, tmp_path / "w")
    step(source)
    path = str(tmp_path / "ckpt.pth")
    source.save_checkpoint(path, extra_ckpt=dict(meta=dict(epoch=0, iter=2)))
    target, _ = prepared(reader, tmp_path / "r")
    target.resume(path)
    for name, value in source.model.state_dict().items():
        assert torch.equal(target.model.state_dict()[name], value)
    assert target.optim_wrapper.get_lr() == source.optim_wrapper.get_lr()
    assert target.param_schedulers[0].last_step == source.param_schedulers[0].last_step
    step(source, 1)
    step(target, 1)
    for name, value in source.model.state_dict().items():
        assert torch.allclose(target.model.state_dict()[name], value)


def test_same_checkpoint_keys_and_prepare_results(tmp_path):
    keys = {}
    for side in ("mmengine", "treadle"):
        strategy, result = prepared(side, tmp_path / side)
        assert isinstance(result, (list, tuple)) and len(result) == 3
        path = str(tmp_path / f"{side}.pth")
        strategy.save_checkpoint(path)
        keys[side] = set(torch.load(path, weights_only=False))
    expected = {"state_dict", "optimizer", "param_schedulers", "meta"}
    assert keys["mmengine"] == keys["treadle"] == expected
