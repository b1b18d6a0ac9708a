"""Scenarios of tests/runner/test_fault_remote.py, run on every rank of a 2-process gloo group:
FSDP2 sharded checkpoints written to and resumed from S3 (the test's loopback moto server,
bucket in TREADLE_TEST_BUCKET), synchronously and asynchronously; a run whose bucket
(TREADLE_TEST_GONE_BUCKET) is deleted mid-run stops on every rank."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

import boto3
import torch
from fsdp_toys import make_model, optim_cfg, rank_batch
from runner_toy_model import toy_iter_cfg

import treadle.dist as dist
from treadle import fileio
from treadle.runner.checkpoint import find_latest_checkpoint
from treadle.runner.checkpoint.sharded import save_sharded_checkpoint
from treadle.runner.checkpoint.sharded_layout import is_sharded_checkpoint
from treadle.runner.hooks import Hook
from treadle.runner.hooks.checkpoint_failure import CheckpointSaveError
from treadle.runner.runner import Runner
from treadle.runner.strategies import FSDPStrategy

STEPS = 3


def fsdp_strategy(seed=0):
    strategy = FSDPStrategy(model_wrapper=dict(auto_wrap_policy=["Linear"]))
    model, wrapper = strategy.prepare(make_model(seed), optim_wrapper=optim_cfg())
    return strategy, model, wrapper


def train(context, model, wrapper, steps, first=0):
    rank, world_size = context["rank"], context["world_size"]
    return [
        model.train_step(rank_batch(first + s, rank, world_size), wrapper)["loss"].item()
        for s in range(steps)
    ]


def scenario_sharded_checkpoints_on_s3(context):
    folder = f"s3://{os.environ['TREADLE_TEST_BUCKET']}/fsdp"
    strategy, model, wrapper = fsdp_strategy()
    train(context, model, wrapper, STEPS)
    strategy.save_checkpoint(f"{folder}/epoch_1.pth", extra_ckpt={"meta": {"epoch": 1}})
    continued = train(context, model, wrapper, STEPS, first=STEPS)
    # Asynchronously, while training goes on (its collectives on a group of their own).
    pending = save_sharded_checkpoint(
        {"state_dict": strategy.model_state_dict(), "meta": {"epoch": 2}},
        f"{folder}/epoch_2.pth",
        async_save=True,
        process_group=torch.distributed.new_group(backend="gloo"),
    )
    train(context, model, wrapper, 1, first=2 * STEPS)
    pending.wait()
    # A fresh model with other weights and no optimizer state resumes from S3.
    other, other_model, other_wrapper = fsdp_strategy(seed=5)
    rest = other.resume(f"{folder}/epoch_1.pth")
    resumed = train(context, other_model, other_wrapper, STEPS, first=STEPS)
    return {
        "continued": continued,
        "resumed": resumed,
        "meta": rest["meta"],
        "complete": [is_sharded_checkpoint(f"{folder}/epoch_{n}.pth") for n in (1, 2)],
        "objects": sorted(fileio.list_dir_or_file(folder, list_dir=False, recursive=True)),
        "latest": find_latest_checkpoint(folder),
    }


class _DeleteBucket(Hook):
    """On rank 0, empties and deletes the bucket once iter_4.pth is saved."""

    priority = "LOWEST"

    def __init__(self, bucket):
        self.bucket = bucket

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 != 4 or dist.get_rank() != 0:
            return
        s3 = boto3.client("s3")
        for item in s3.list_objects_v2(Bucket=self.bucket).get("Contents", []):
            s3.delete_object(Bucket=self.bucket, Key=item["Key"])
        s3.delete_bucket(Bucket=self.bucket)


def scenario_a_bucket_gone_stops_every_rank(context):
    bucket = os.environ["TREADLE_TEST_GONE_BUCKET"]
    checkpoint = dict(
        type="CheckpointHook", interval=4, by_epoch=False, out_dir=f"s3://{bucket}/ckpts"
    )
    cfg = toy_iter_cfg(
        os.path.join(context["out_dir"], "gone"),
        launcher="pytorch",
        env_cfg=dict(dist_cfg=dict(backend="gloo")),
        experiment_name="gone",
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        default_hooks=dict(checkpoint=checkpoint),
        custom_hooks=[_DeleteBucket(bucket)],
    )
    runner = Runner(**cfg)
    raised = None
    try:
        runner.train()
    except CheckpointSaveError as error:
        raised = str(error)
    dist.barrier()  # no rank is left waiting for the other
    return dict(iters=runner.train_loop.iter, raised=raised)
