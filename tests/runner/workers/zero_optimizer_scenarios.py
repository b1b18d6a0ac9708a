"""Scenarios of tests/runner/test_optim_builder_zero.py: ZeroRedundancyOptimizer built from a
config in a real gloo group, stepped like DDP would (gradients averaged over the ranks), and
compared with a plain optimizer over the same averaged gradients."""

import copy
import importlib.util

import torch
from torch import nn

import treadle.dist as dist
from treadle.runner.optim import ZeroRedundancyOptimizer, build_optim_wrapper

STEPS = 3


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))


def averaged_grads_step(model, optimizer, step, rank, world_size):
    model.zero_grad()
    torch.manual_seed(100 * step + rank)  # each rank its own batch
    model(torch.randn(6, 4)).pow(2).mean().backward()
    for param in model.parameters():
        torch.distributed.all_reduce(param.grad)
        param.grad /= world_size
    optimizer.step()


def reference_grads_step(model, optimizer, step, world_size):
    """The same averaged gradients, computed on one process from every rank's batch."""
    grads = None
    for rank in range(world_size):
        model.zero_grad()
        torch.manual_seed(100 * step + rank)
        model(torch.randn(6, 4)).pow(2).mean().backward()
        current = [p.grad.clone() for p in model.parameters()]
        grads = current if grads is None else [a + b for a, b in zip(grads, current, strict=True)]
    for param, grad in zip(model.parameters(), grads, strict=True):
        param.grad = grad / world_size
    optimizer.step()


CFG = dict(
    optimizer=dict(
        type="ZeroRedundancyOptimizer", optimizer_type="AdamW", lr=0.01, weight_decay=0.1
    ),
    paramwise_cfg=dict(norm_decay_mult=0.0, bias_decay_mult=0.0),
)


def scenario_build_and_step(context):
    rank, world_size = context["rank"], context["world_size"]
    model = make_model()
    optim_wrapper = build_optim_wrapper(model, CFG)
    zero = optim_wrapper.optimizer
    for step in range(STEPS):
        averaged_grads_step(model, zero, step, rank, world_size)

    reference = make_model()
    plain = build_optim_wrapper(
        reference, dict(CFG, optimizer=dict(type="AdamW", lr=0.01, weight_decay=0.1))
    ).optimizer
    for step in range(STEPS):
        reference_grads_step(reference, plain, step, world_size)
    difference = max(
        (a - b).abs().max().item()
        for a, b in zip(model.parameters(), reference.parameters(), strict=True)
    )
    return {
        "type": type(zero).__name__,
        "local": type(zero.optim).__name__,
        "groups": [g["weight_decay"] for g in zero.param_groups],
        "difference": difference,
        "first_param": model[0].weight.detach().flatten()[:4].tolist(),
        "local_params": sum(len(g["params"]) for g in zero.optim.param_groups),
    }


def scenario_state_dict(context):
    """state_dict gathers everything on rank 0; loading it on every rank resumes the same."""
    rank, world_size = context["rank"], context["world_size"]
    model = make_model()
    zero = build_optim_wrapper(model, CFG).optimizer
    averaged_grads_step(model, zero, 0, rank, world_size)
    state = zero.state_dict()
    summary = {"keys": sorted(state), "states": len(state.get("state", {}))}
    shared = [state]
    dist.broadcast_object_list(shared, src=0)

    resumed_model = make_model()
    resumed_model.load_state_dict(model.state_dict())
    resumed = build_optim_wrapper(resumed_model, CFG).optimizer
    # As from a checkpoint: state_dict() holds the live state's tensors, like torch's optimizers.
    loaded = copy.deepcopy(shared[0])
    resumed.load_state_dict(loaded)
    summary["input_kept"] = all(value is not None for value in loaded["state"].values())
    averaged_grads_step(model, zero, 1, rank, world_size)
    averaged_grads_step(resumed_model, resumed, 1, rank, world_size)
    summary["resumed_equal"] = all(
        torch.equal(a, b)
        for a, b in zip(model.parameters(), resumed_model.parameters(), strict=True)
    )
    return summary


def scenario_unknown_optimizer_type(context):
    try:
        ZeroRedundancyOptimizer(make_model().parameters(), optimizer_type="AdamWW", lr=0.1)
    except KeyError as error:
        return str(error)
    return None


def scenario_third_party_local_optimizer(context):
    """A local optimizer of an optional package, by its registered name."""
    if importlib.util.find_spec("lion_pytorch") is None:
        return "lion-pytorch not installed"
    zero = ZeroRedundancyOptimizer(make_model().parameters(), optimizer_type="Lion", lr=1e-4)
    return type(zero.optim).__module__ + "." + type(zero.optim).__name__
