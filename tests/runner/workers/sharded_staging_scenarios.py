"""Scenarios of tests/runner/test_checkpoint_sharded_async_staging.py, run on every rank of a
2-process gloo group: asynchronous sharded (FSDP2) saves whose copy to host memory runs in the
background stager's thread while training goes on, and a copy that fails on one rank."""

import os
import threading
import time

import torch
from fsdp_toys import optim_cfg
from torch import nn

from treadle.runner.checkpoint.sharded import load_sharded_checkpoint
from treadle.runner.checkpoint.sharded_layout import is_sharded_checkpoint
from treadle.runner.checkpoint.sharded_staging import BackgroundStager, sharded_storage_key
from treadle.runner.model import BaseModel
from treadle.runner.strategies import FSDPStrategy
from treadle.runner.strategies.checkpoint_io import ShardedCheckpointIO

FEATURES = 16
# Large enough that each rank's shard of `middle` (and of its Adam moments) is copied in the
# background (1 MiB and more); the rest is cloned when the save starts.
HIDDEN = 512
WIDE = 1024


class NormToy(BaseModel):
    """Linear layers (FSDP units) around a BatchNorm, whose running statistics every forward
    changes: a buffer the save must take as it was when the save started."""

    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(FEATURES, HIDDEN)
        self.middle = nn.Linear(HIDDEN, WIDE)
        self.norm = nn.BatchNorm1d(WIDE)
        self.head = nn.Linear(WIDE, 1)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        hidden = torch.tanh(self.norm(self.middle(torch.tanh(self.first(inputs)))))
        outputs = self.head(hidden).squeeze(-1)
        if mode == "loss":
            return {"loss_mse": ((outputs - data_samples) ** 2).mean()}
        return outputs


def batch(step, rank):
    generator = torch.Generator().manual_seed(100 * step + rank)
    return {
        "inputs": torch.randn(4, FEATURES, generator=generator),
        "data_samples": torch.randn(4, generator=generator),
    }


def prepared(stager):
    torch.manual_seed(0)
    strategy = FSDPStrategy(model_wrapper=dict(auto_wrap_policy=["Linear"]))
    model, wrapper = strategy.prepare(NormToy(), optim_wrapper=optim_cfg())
    strategy.checkpoint_io = ShardedCheckpointIO(stager=stager)
    return strategy, model, wrapper


def finish(strategy):
    """Wait for the save in flight; rank 0 names the checkpoint once its own write is over
    (the others' wait returns at theirs): a barrier before any rank reads it."""
    strategy.wait_for_checkpoint()
    torch.distributed.barrier()


def train(context, model, wrapper, steps, first):
    for step in range(first, first + steps):
        model.train_step(batch(step, context["rank"]), wrapper)


def checkpoint(strategy, iteration):
    return {
        "state_dict": strategy.model_state_dict(),
        "optimizer": strategy.optim_state_dict(),
        "meta": {"iter": iteration},
    }


def flat(value, prefix=""):
    """Every tensor of a loaded checkpoint by its dotted name."""
    if isinstance(value, torch.Tensor):
        return {prefix: value}
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return {}
    out = {}
    for key, item in items:
        out.update(flat(item, f"{prefix}.{key}" if prefix else str(key)))
    return out


class WatchedStager(BackgroundStager):
    """Copies only once the optimizer's next step has started (so that a step that did not wait
    for the copy would change what it reads first), and records where it copied what."""

    def __init__(self):
        super().__init__()
        self.step_started = threading.Event()
        self.copied = threading.Event()
        self.threads = []
        self.copied_keys = []
        self.order = []

    def copy_to_host(self, tensors):
        self.threads.append(threading.current_thread().name)
        self.step_started.wait(timeout=30)
        time.sleep(0.2)  # the step, had it not waited, would be over by now
        self.copied_keys.append({sharded_storage_key(tensor) for tensor in tensors})
        staged = super().copy_to_host(tensors)
        self.order.append("copied")
        self.copied.set()
        return staged


def scenario_background_copy_holds_the_step_that_saved(context):
    stager = WatchedStager()
    strategy, model, wrapper = prepared(stager)
    train(context, model, wrapper, 2, first=0)
    out = context["out_dir"]
    synchronous, asynchronous = os.path.join(out, "sync.pth"), os.path.join(out, "async.pth")
    strategy.write_checkpoint(checkpoint(strategy, 2), synchronous)
    optimizer = wrapper.optimizer
    # Registered before the save's own hook: runs first, at the start of the next step.
    optimizer.register_step_pre_hook(lambda *_: stager.step_started.set())
    optimizer.register_step_post_hook(lambda *_: stager.order.append("stepped"))
    started = time.perf_counter()
    strategy.write_checkpoint(checkpoint(strategy, 2), asynchronous, async_save=True)
    save_seconds = time.perf_counter() - started
    returned_before_copy = not stager.copied.is_set()
    live_weight = model.module.middle.weight._local_tensor
    train(context, model, wrapper, 2, first=2)
    finish(strategy)
    saved_sync = flat(load_sharded_checkpoint(synchronous))
    saved_async = flat(load_sharded_checkpoint(asynchronous))
    running_mean = model.module.norm.running_mean
    return {
        "returned_before_copy": returned_before_copy,
        "save_seconds": save_seconds,
        "threads": stager.threads,
        "middle_weight_copied_there": sharded_storage_key(live_weight) in stager.copied_keys[0],
        "order": stager.order,
        "names": sorted(saved_async),
        "same_as_sync": sorted(saved_sync) == sorted(saved_async)
        and all(torch.equal(saved_sync[name], saved_async[name]) for name in saved_sync),
        "running_mean_changed_since": not torch.equal(
            saved_async["state_dict.norm.running_mean"], running_mean
        ),
    }


class FailingStager(BackgroundStager):
    """Fails the first copy on rank 1 only."""

    def __init__(self, rank):
        super().__init__()
        self.fail = rank == 1

    def copy_to_host(self, tensors):
        if self.fail:
            self.fail = False
            raise MemoryError("no host memory left for the copy")
        return super().copy_to_host(tensors)


def scenario_a_failed_copy_is_raised_on_every_rank_and_keeps_the_previous(context):
    strategy, model, wrapper = prepared(FailingStager(context["rank"]))
    train(context, model, wrapper, 1, first=0)
    target = os.path.join(context["out_dir"], "failing", "iter_1.pth")
    strategy.write_checkpoint(checkpoint(strategy, 1), target)
    train(context, model, wrapper, 1, first=1)
    strategy.write_checkpoint(checkpoint(strategy, 2), target, async_save=True)
    train(context, model, wrapper, 1, first=2)  # its step waits for the copy, failed or not
    try:
        strategy.wait_for_checkpoint()
        error = None
    except Exception as exc:  # the test checks type and message
        error = f"{type(exc).__name__}: {exc}"
    kept = load_sharded_checkpoint(target)["meta"]["iter"] if is_sharded_checkpoint(target) else 0
    # The stager still works for the next save.
    again = os.path.join(context["out_dir"], "failing", "iter_3.pth")
    strategy.write_checkpoint(checkpoint(strategy, 3), again, async_save=True)
    train(context, model, wrapper, 1, first=3)
    finish(strategy)
    strategy.checkpoint_io.close()
    return {
        "error": error,
        "kept": kept,
        "next": load_sharded_checkpoint(again)["meta"]["iter"],
    }


def scenario_without_guarded_optimizers_the_copy_is_made_before_save_returns(context):
    stager = WatchedStager()
    strategy, model, wrapper = prepared(stager)
    train(context, model, wrapper, 1, first=0)
    out = context["out_dir"]
    synchronous, asynchronous = os.path.join(out, "plain_sync.pth"), os.path.join(out, "plain.pth")
    strategy.write_checkpoint(checkpoint(strategy, 1), synchronous)
    # Straight to the CheckpointIO: nothing says which tensors only a step changes.
    strategy.checkpoint_io.save(checkpoint(strategy, 1), asynchronous, async_save=True)
    train(context, model, wrapper, 1, first=1)
    finish(strategy)
    saved_sync = flat(load_sharded_checkpoint(synchronous))
    saved_async = flat(load_sharded_checkpoint(asynchronous))
    return {
        "stager_used": bool(stager.threads),
        "same_as_sync": sorted(saved_sync) == sorted(saved_async)
        and all(torch.equal(saved_sync[name], saved_async[name]) for name in saved_sync),
    }
