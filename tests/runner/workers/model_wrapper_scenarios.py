"""Scenarios of tests/runner/test_model_wrappers_distributed.py, run on every rank of a gloo
group: each wrapper wraps a BaseModel, runs train steps on this rank's share of a batch, and
returns the parameters (whole, for FSDP) for the test to compare across ranks and with one
process training on the whole batch."""

import contextlib
import logging

import torch
import torch.nn as nn

from treadle.logging import Logger
from treadle.runner.model import (
    BaseModel,
    MMDistributedDataParallel,
    MMFullyShardedDataParallel,
    MMSeparateDistributedDataParallel,
    is_model_wrapper,
)

STEPS = 3
LR = 0.1


class Regressor(BaseModel):
    def __init__(self, unused=False):
        super().__init__()
        self.hidden = nn.Linear(4, 3)
        self.head = nn.Linear(3, 1)
        if unused:
            self.spare = nn.Linear(2, 2)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        outputs = self.head(torch.tanh(self.hidden(inputs)))
        if mode == "loss":
            return {"loss_mse": ((outputs - data_samples) ** 2).mean()}
        if mode == "predict":
            return list(outputs.detach())
        return outputs


class SGDWrapper:
    """What train_step needs of an optimizer wrapper."""

    def __init__(self, params):
        self.optimizer = torch.optim.SGD(params, lr=LR)

    def optim_context(self, model):
        return contextlib.nullcontext()

    def update_params(self, loss):
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def make_model(seed=0, **kwargs):
    torch.manual_seed(seed)
    return Regressor(**kwargs)


def whole_batch(step):
    generator = torch.Generator().manual_seed(100 + step)
    return torch.randn(8, 4, generator=generator), torch.randn(8, 1, generator=generator)


def rank_batch(context, step):
    inputs, targets = whole_batch(step)
    rank, world_size = context["rank"], context["world_size"]
    return {"inputs": inputs[rank::world_size], "data_samples": targets[rank::world_size]}


def as_lists(named):
    return {name: value.detach().tolist() for name, value in named}


def scenario_ddp(context):
    # Different initial weights per rank: DDP broadcasts rank 0's.
    model = MMDistributedDataParallel(make_model(seed=context["rank"]))
    wrapper = SGDWrapper(model.parameters())
    losses = []
    for step in range(STEPS):
        log_vars = model.train_step(rank_batch(context, step), wrapper)
        losses.append(log_vars["loss"].item())
    predictions = model.val_step(rank_batch(context, 0))
    return {
        "params": as_lists(model.module.named_parameters()),
        "losses": losses,
        "is_wrapper": is_model_wrapper(model),
        "log_keys": sorted(log_vars),
        "predictions": len(predictions) == len(model.test_step(rank_batch(context, 0))),
    }


def scenario_ddp_detect_anomalous_params(context):
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    logger = Logger.get_current_instance()
    logger.addHandler(handler)
    try:
        model = MMDistributedDataParallel(
            make_model(unused=True), detect_anomalous_params=True, find_unused_parameters=True
        )
        model.train_step(rank_batch(context, 0), SGDWrapper(model.parameters()))
    finally:
        logger.removeHandler(handler)
    return [record.getMessage() for record in records if record.levelno == logging.ERROR]


class TwoPart(BaseModel):
    """A GAN-like model: two parts, each updated by its own optimizer, one at a time."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.first = nn.Linear(4, 2)
        self.second = nn.Linear(2, 1)
        self.frozen = nn.Linear(1, 1).requires_grad_(False)
        self.activation = nn.Tanh()

    def forward(self, inputs, data_samples=None, mode="tensor"):
        return self.second(self.activation(self.first(inputs)))

    def train_step(self, data, optim_wrapper):
        data = self.data_preprocessor(data, True)
        inputs, targets = data["inputs"], data["data_samples"]
        log_vars = {}
        # Update the first part with the second fixed, then the second with the first fixed.
        loss_first = ((self.second(self.activation(self.first(inputs))) - targets) ** 2).mean()
        optim_wrapper["first"].update_params(loss_first)
        with torch.no_grad():
            features = self.activation(self.first(inputs))
        loss_second = ((self.second(features) - targets) ** 2).mean()
        optim_wrapper["second"].update_params(loss_second)
        log_vars.update(loss_first=loss_first.detach(), loss_second=loss_second.detach())
        return log_vars


def scenario_separate_ddp(context):
    model = MMSeparateDistributedDataParallel(TwoPart())
    parts = model.module
    wrappers = {
        "first": SGDWrapper(parts.first.parameters()),
        "second": SGDWrapper(parts.second.parameters()),
    }
    for step in range(STEPS):
        model.train_step(rank_batch(context, step), wrappers)
    with model.no_sync():  # every wrapped part at once
        parts.first(torch.ones(1, 4)).sum().backward()
    # Calling the wrapper runs the model's forward (DDP's would need its skipped state).
    outputs = model(torch.ones(2, 4))
    model.eval()
    return {
        "forward": outputs.shape == (2, 1),
        "params": as_lists(
            (name, param)
            for name, param in parts.named_parameters()
            if not name.startswith("frozen")
        ),
        "wrapped": {name: type(child).__name__ for name, child in parts.named_children()},
        "training": [model.training, parts.training, parts.first.training],
        "is_wrapper": is_model_wrapper(model),
    }


def scenario_fsdp(context):
    model = MMFullyShardedDataParallel(
        # FSDP broadcasts rank 0's weights only for GPU modules: same seed on every rank.
        make_model(seed=0),
        device_id=torch.device("cpu"),
        # Everything as a config file writes it: names, dicts, dtype names.
        sharding_strategy="FULL_SHARD",
        backward_prefetch="BACKWARD_POST",
        cpu_offload=False,
        mixed_precision=dict(param_dtype="float32", reduce_dtype="float32"),
        auto_wrap_policy=dict(
            type="torch.distributed.fsdp.wrap.size_based_auto_wrap_policy", min_num_params=4
        ),
        ignored_modules=["data_preprocessor"],
    )
    wrapper = SGDWrapper(model.parameters())
    losses = []
    for step in range(STEPS):
        losses.append(model.train_step(rank_batch(context, step), wrapper)["loss"].item())
    predictions = model.val_step(rank_batch(context, 0))
    # FSDP2 shards each parameter as a DTensor: full_tensor() gathers it from every rank.
    params = as_lists(
        (name, param.full_tensor() if hasattr(param, "full_tensor") else param)
        for name, param in model.module.named_parameters()
    )
    return {
        "params": params,
        "losses": losses,
        "is_wrapper": is_model_wrapper(model),
        "predictions": [p.tolist() for p in predictions],
        "fsdp_units": len(model.fsdp_units),
        "mixed_precision": str(model.mp_policy.param_dtype),
    }
