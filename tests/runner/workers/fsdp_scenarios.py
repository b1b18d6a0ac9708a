"""Scenarios of tests/runner/test_strategies_fsdp_distributed.py, run on every rank of a 2-process
gloo group: FSDPStrategy (FSDP2) against DDP, sharded checkpoints saved and resumed, saved
asynchronously, loaded into a model that differs, and whole ('full') checkpoints. Each returns
plain values for the test to compare across ranks and with one process."""

import os
import shutil

import torch
from fsdp_toys import make_model, optim_cfg, rank_batch

from treadle.runner.checkpoint.sharded_layout import is_sharded_checkpoint
from treadle.runner.model import MMDistributedDataParallel
from treadle.runner.optim import build_optim_wrapper
from treadle.runner.strategies import FSDPStrategy

STEPS = 3


def fsdp_strategy(seed=0, model_kwargs=None, **kwargs):
    kwargs.setdefault("model_wrapper", dict(auto_wrap_policy=["Linear"]))
    strategy = FSDPStrategy(**kwargs)
    model, wrapper = strategy.prepare(
        make_model(seed, **(model_kwargs or {})), optim_wrapper=optim_cfg()
    )
    return strategy, model, wrapper


def train(context, model, wrapper, steps, first=0):
    return [
        model.train_step(rank_batch(first + s, context["rank"], context["world_size"]), wrapper)[
            "loss"
        ].item()
        for s in range(steps)
    ]


def full_weights(strategy):
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    inner = strategy.model.module
    state = get_model_state_dict(inner, options=StateDictOptions(full_state_dict=True))
    return {name: value.tolist() for name, value in state.items()}


def path(context, name):
    return os.path.join(context["out_dir"], name)


def scenario_fsdp_matches_ddp(context):
    # Different seeds per rank: FSDP broadcasts rank 0's weights, as DDP does.
    strategy, model, wrapper = fsdp_strategy(seed=context["rank"])
    fsdp_losses = train(context, model, wrapper, 2 * STEPS)
    ddp_model = MMDistributedDataParallel(module=make_model(0))
    ddp_wrapper = build_optim_wrapper(ddp_model.module, optim_cfg())
    ddp_losses = train(context, ddp_model, ddp_wrapper, 2 * STEPS)
    units = [type(unit).__name__ for unit in model.fsdp_units]
    # An optimizer wrapper built on the model before sharding is rebuilt over its shards.
    unsharded = make_model(0)
    built = build_optim_wrapper(unsharded, optim_cfg())
    rebuilt_model, rebuilt = FSDPStrategy(model_wrapper=dict(auto_wrap_policy=["Linear"])).prepare(
        unsharded, optim_wrapper=built
    )
    return {
        "fsdp": fsdp_losses,
        "prebuilt": train(context, rebuilt_model, rebuilt, 2 * STEPS),
        "prebuilt_same_wrapper": rebuilt is built,
        "ddp": ddp_losses,
        "units": units,
        "sharded": type(next(model.parameters())).__name__,
        "weights": full_weights(strategy),
        "ddp_weights": {n: p.tolist() for n, p in ddp_model.module.state_dict().items()},
    }


def scenario_sharded_checkpoint_resumes_exactly(context):
    strategy, model, wrapper = fsdp_strategy()
    train(context, model, wrapper, STEPS)
    target = path(context, "sharded/epoch_1.pth")
    strategy.save_checkpoint(target, extra_ckpt={"meta": {"epoch": 1}, "note": [1, 2]})
    files = sorted(os.listdir(target))
    weights = full_weights(strategy)
    continued = train(context, model, wrapper, STEPS, first=STEPS)
    # A fresh model with other weights and no optimizer state resumes from the checkpoint.
    other, other_model, other_wrapper = fsdp_strategy(seed=5)
    rest = other.resume(target)
    resumed = train(context, other_model, other_wrapper, STEPS, first=STEPS)
    return {
        "files": files,
        "continued": continued,
        "resumed": resumed,
        "weights": weights,
        "rest": {"meta": rest["meta"]["epoch"], "note": rest["note"]},
        "temporary_left": sorted(n for n in os.listdir(os.path.dirname(target)) if n[0] == "."),
    }


def scenario_async_save_overlaps_and_finishes(context):
    strategy, model, wrapper = fsdp_strategy()
    train(context, model, wrapper, 1)
    before = full_weights(strategy)
    first, second = path(context, "async/iter_1.pth"), path(context, "async/iter_2.pth")
    strategy.write_checkpoint(
        {"state_dict": strategy.model_state_dict(), "meta": {"iter": 1}}, first, async_save=True
    )
    # Training goes on while the checkpoint is written: it must keep the weights of the save.
    train(context, model, wrapper, 2, first=1)
    strategy.write_checkpoint(
        {"state_dict": strategy.model_state_dict(), "meta": {"iter": 2}}, second, async_save=True
    )
    first_complete_when_second_started = is_sharded_checkpoint(first)
    strategy.wait_for_checkpoint()
    loaded, _, _ = fsdp_strategy(seed=3)
    loaded.load_checkpoint(first)
    return {
        "first_complete": first_complete_when_second_started,
        "second_complete": is_sharded_checkpoint(second),
        "same": full_weights(loaded) == before,
    }


def _error(call):
    try:
        call()
    except Exception as error:  # the test checks type and message
        return f"{type(error).__name__}: {error}"
    return None


def scenario_mismatched_model_is_refused_with_names(context):
    target = path(context, "sharded/epoch_1.pth")
    wider, _, _ = fsdp_strategy(model_kwargs=dict(hidden=10))
    renamed, _, _ = fsdp_strategy(model_kwargs=dict(head_name="out"))
    return {
        "shapes": _error(lambda: wider.load_checkpoint(target)),
        "names": _error(lambda: renamed.load_checkpoint(target, strict=True)),
    }


def scenario_full_state_dict_is_one_file_from_rank_0(context):
    strategy, model, wrapper = fsdp_strategy(state_dict_cfg="full")
    train(context, model, wrapper, STEPS)
    target = path(context, "full/epoch_1.pth")
    strategy.save_checkpoint(target)
    weights = full_weights(strategy)
    continued = train(context, model, wrapper, STEPS, first=STEPS)
    other, other_model, other_wrapper = fsdp_strategy(seed=4, state_dict_cfg="full")
    other.resume(target)
    resumed = train(context, other_model, other_wrapper, STEPS, first=STEPS)
    # A whole file also loads into a strategy that saves sharded checkpoints.
    local, _, _ = fsdp_strategy(seed=6)
    local.load_checkpoint(target)
    return {
        "is_file": os.path.isfile(target),
        "saved": sorted(torch.load(target, weights_only=True)) if context["rank"] == 0 else None,
        "continued": continued,
        "resumed": resumed,
        "same": full_weights(local) == weights,
    }


def _runner_cfg(context, work_dir, name, **overrides):
    from runner_toy_model import toy_cfg

    return toy_cfg(
        work_dir,
        strategy=dict(type="FSDPStrategy"),
        launcher="pytorch",
        experiment_name=name,
        optim_wrapper=dict(type="OptimWrapper", optimizer=dict(type="AdamW", lr=0.01)),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=1),
            checkpoint=dict(type="CheckpointHook", interval=1, async_save=True),
        ),
        **overrides,
    )


def scenario_flexible_runner_saves_async_and_resumes_exactly(context):
    from treadle.runner.checkpoint import find_latest_checkpoint
    from treadle.runner.runner import FlexibleRunner

    work = path(context, "runner_a")
    runner = FlexibleRunner(**_runner_cfg(context, work, "fsdp_runner_a"))
    runner.train()
    finished = full_weights(runner.strategy)
    checkpoints = sorted(n for n in os.listdir(work) if n.endswith(".pth"))
    complete = [is_sharded_checkpoint(os.path.join(work, n)) for n in checkpoints]
    # resume=True in a work dir whose newest complete checkpoint is epoch 2 (epoch 3's save
    # stopped before its .metadata, as a run killed mid-save leaves it).
    other = path(context, "runner_b")
    if context["rank"] == 0:
        shutil.copytree(os.path.join(work, "epoch_2.pth"), os.path.join(other, "epoch_2.pth"))
        shutil.copytree(os.path.join(work, "epoch_3.pth"), os.path.join(other, "epoch_3.pth"))
        os.remove(os.path.join(other, "epoch_3.pth", ".metadata"))
    torch.distributed.barrier()
    resumed = FlexibleRunner(**_runner_cfg(context, other, "fsdp_runner_b", resume=True))
    resumed.train()
    by_path = FlexibleRunner(
        **_runner_cfg(
            context,
            path(context, "runner_c"),
            "fsdp_runner_c",
            resume=os.path.join(work, "epoch_2.pth"),
        )
    )
    by_path.train()
    return {
        "same_by_path": full_weights(by_path.strategy) == finished,
        "checkpoints": checkpoints,
        "complete": complete,
        "latest": os.path.basename(find_latest_checkpoint(work)),
        "same": full_weights(resumed.strategy) == finished,
    }


def scenario_sharding_strategies_and_options_train_alike(context):
    def losses(**wrapper):
        _, model, optim_wrapper = fsdp_strategy(model_wrapper=wrapper)
        return train(context, model, optim_wrapper, STEPS)

    reference = losses(sharding_strategy="FULL_SHARD")
    # Activation checkpointing (applied before sharding) keeps the losses and the names.
    strategy, model, optim_wrapper = fsdp_strategy(
        activation_checkpointing=dict(module_classes=["Linear"])
    )
    checkpointed_losses = train(context, model, optim_wrapper, STEPS)
    names = sorted(strategy.model_state_dict())
    bf16 = losses(mixed_precision=dict(param_dtype="bfloat16", reduce_dtype="float32"))
    return {
        "reference": reference,
        "others": {
            name: losses(sharding_strategy=name)
            for name in ("SHARD_GRAD_OP", "NO_SHARD", "HYBRID_SHARD")
        },
        "cpu_offload": losses(cpu_offload=True),
        "checkpointed": checkpointed_losses,
        "checkpointed_names": names,
        "bf16": bf16,
    }


def scenario_skip_init_weights_builds_on_meta_then_loads(context):
    strategy = FSDPStrategy(skip_init_weights=True, model_wrapper=dict(auto_wrap_policy=["Linear"]))
    model = strategy.prepare(dict(type="FsdpToyModel"))
    on_meta = any(p.is_meta for p in model.parameters())
    strategy.load_checkpoint(path(context, "sharded/epoch_1.pth"))
    return {"on_meta": on_meta, "weights": full_weights(strategy)}
