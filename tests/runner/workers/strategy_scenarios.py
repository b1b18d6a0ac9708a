"""Scenarios for tests/runner/test_strategies_single_device.py, run on each rank of a 2-process
gloo group: SingleDeviceStrategy wraps the model in MMDistributedDataParallel on the CPU, and
its save/load write on rank 0 and read on every rank."""

import os

import torch
from torch import nn

from treadle import dist
from treadle.runner.optim import OptimWrapper
from treadle.runner.strategies import SingleDeviceStrategy


def scenario_prepare_wraps_in_ddp_on_cpu(context):
    torch.manual_seed(context["rank"])  # different starts: DDP broadcasts rank 0's weights
    strategy = SingleDeviceStrategy()
    model = nn.Linear(2, 1)
    wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))
    ddp, optim_wrapper = strategy.prepare(model, optim_wrapper=wrapper)
    inputs = torch.full((1, 2), float(context["rank"] + 1))
    optim_wrapper.update_params(ddp(inputs).sum())
    return {
        "type": type(ddp).__name__,
        "weight": ddp.module.weight.detach().tolist(),
        "optim_is_same": optim_wrapper is wrapper,
        "world_size": strategy.world_size,
    }


def scenario_no_sync_skips_the_all_reduce(context):
    torch.manual_seed(0)
    strategy = SingleDeviceStrategy()
    ddp = strategy.prepare(nn.Linear(2, 1, bias=False))
    inputs = torch.full((1, 2), float(context["rank"] + 1))
    with strategy.no_sync():
        ddp(inputs).sum().backward()
    local = ddp.module.weight.grad.clone()
    ddp.module.weight.grad = None
    ddp(inputs).sum().backward()
    return {"local": local.tolist(), "synced": ddp.module.weight.grad.tolist()}


def scenario_save_on_rank_0_load_everywhere(context):
    strategy = SingleDeviceStrategy()
    path = os.path.join(context["out_dir"], "strategy.pth")
    model = nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.fill_(float(context["rank"] + 3))
    strategy.save({"model": model}, path)
    dist.barrier()
    fresh = nn.Linear(2, 1)
    unused = strategy.load({"model": fresh}, path)
    return {"weight": fresh.weight.detach().tolist(), "unused": unused}
