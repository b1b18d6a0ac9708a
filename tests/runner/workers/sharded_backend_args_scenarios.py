"""Scenarios of tests/runner/test_checkpoint_sharded_backend_args.py, run on every rank of a
2-process gloo group with no AWS endpoint or credentials in the environment: FSDP2 sharded
checkpoints go to the test's loopback S3 server (bucket in TREADLE_TEST_BUCKET) with the endpoint
and credentials given only in CheckpointHook's backend_args (JSON in TREADLE_TEST_BACKEND_ARGS),
and a run resumes from them."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

import torch
from iter_counter import CountIters
from runner_toy_model import toy_cfg

from treadle import fileio
from treadle.runner.runner import FlexibleRunner
from treadle.runner.strategies.checkpoint_io import ShardedCheckpointIO


def _full_weights(strategy):
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    state = get_model_state_dict(
        strategy.model.module, options=StateDictOptions(full_state_dict=True)
    )
    return {name: value.tolist() for name, value in state.items()}


def _runner(work_dir, name, backend_args, counter, **overrides):
    cfg = toy_cfg(
        work_dir,
        strategy=dict(type="FSDPStrategy"),
        launcher="pytorch",
        experiment_name=name,
        optim_wrapper=dict(type="OptimWrapper", optimizer=dict(type="AdamW", lr=0.01)),
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        default_hooks=dict(
            checkpoint=dict(
                type="CheckpointHook",
                interval=1,
                out_dir=f"s3://{os.environ['TREADLE_TEST_BUCKET']}/run",
                backend_args=backend_args,
            ),
        ),
        custom_hooks=[counter],
        **overrides,
    )
    return FlexibleRunner(**cfg)


def scenario_runner_saves_with_backend_args_and_resumes_exactly(context):
    backend_args = json.loads(os.environ["TREADLE_TEST_BACKEND_ARGS"])
    work = os.path.join(context["out_dir"], "work")
    first = CountIters()
    runner = _runner(work, "sharded_backend_args_a", backend_args, first)
    runner.train()
    finished = _full_weights(runner.strategy)
    folder = f"s3://{os.environ['TREADLE_TEST_BUCKET']}/run/work"
    # Epoch 3's save cut short before its .metadata: the run resumes from epoch 2.
    if context["rank"] == 0:
        store = fileio.get_file_backend(folder, backend_args=backend_args)
        objects = sorted(store.list_dir_or_file(folder, list_dir=False, recursive=True))
        store.remove(f"{folder}/epoch_3.pth/.metadata")
    else:
        objects = None
    torch.distributed.barrier()
    second = CountIters()
    resumed = _runner(work, "sharded_backend_args_b", backend_args, second, resume=True)
    resumed.train()
    # Named (--resume PATH) from a work_dir of its own.
    third = CountIters()
    named = os.path.join(context["out_dir"], "named")
    by_path = _runner(
        named, "sharded_backend_args_c", backend_args, third, resume=f"{folder}/epoch_2.pth"
    )
    by_path.train()
    return {
        "objects": objects,
        "trained": [first.trained, second.trained, third.trained],
        "same": _full_weights(resumed.strategy) == finished,
        "same_by_path": _full_weights(by_path.strategy) == finished,
    }


def scenario_sharded_io_saves_and_loads_with_backend_args(context):
    backend_args = json.loads(os.environ["TREADLE_TEST_BACKEND_ARGS"])
    path = f"s3://{os.environ['TREADLE_TEST_BUCKET']}/direct/iter_1.pth"
    io = ShardedCheckpointIO()
    saved = {"state_dict": {"w": torch.arange(6.0) + context["rank"]}, "meta": {"iter": 1}}
    io.save(saved, path, backend_args=backend_args)
    loaded = io.load(path, backend_args=backend_args)
    # Values that are not sharded are saved from rank 0 only.
    return loaded["state_dict"]["w"].tolist(), loaded["meta"]
