"""Scenarios of tests/runner/test_optim_wrapper_distributed.py, run on every rank of a gloo
group: OptimWrapper with gradient accumulation around a real DistributedDataParallel model."""

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from treadle.runner.optim import OptimWrapper

CALLS = 4
ACCUMULATE = 2


def batch(rank, call):
    generator = torch.Generator().manual_seed(100 * rank + call)
    return torch.randn(3, 4, generator=generator), torch.randn(3, 2, generator=generator)


def make_model():
    torch.manual_seed(0)
    return nn.Linear(4, 2)


def loss_of(model, data):
    inputs, targets = data
    return (model(inputs) - targets).pow(2).mean()


def reference_parameters(world_size):
    """One process, every rank's batches: the average over ranks of the accumulated
    gradients, as DDP's all-reduce gives at each update."""
    model = make_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for call in range(CALLS):
        for rank in range(world_size):
            (loss_of(model, batch(rank, call)) / ACCUMULATE / world_size).backward()
        if (call + 1) % ACCUMULATE == 0:
            optimizer.step()
            optimizer.zero_grad()
    return [param.detach().clone() for param in model.parameters()]


def scenario_accumulation_syncs_only_on_updates(context):
    rank, world_size = context["rank"], context["world_size"]
    model = DistributedDataParallel(make_model())
    wrapper = OptimWrapper(
        torch.optim.SGD(model.parameters(), lr=0.1), accumulative_counts=ACCUMULATE
    )
    wrapper.initialize_count_status(model, 0, CALLS)
    local_grads = []
    for call in range(CALLS):
        with wrapper.optim_context(model):
            loss = loss_of(model, batch(rank, call))
        wrapper.update_params(loss)
        if not wrapper.should_update():
            local_grads.append([param.grad.clone() for param in model.parameters()])
    # What this rank's first batch alone gives: equal to the held gradients only if unsynced.
    alone = make_model()
    loss_of(alone, batch(rank, 0)).div(ACCUMULATE).backward()
    return {
        "first_grads": local_grads[0],
        "first_grads_alone": [param.grad for param in alone.parameters()],
        "parameters": [param.detach().clone() for param in model.parameters()],
        "reference": reference_parameters(world_size),
    }
