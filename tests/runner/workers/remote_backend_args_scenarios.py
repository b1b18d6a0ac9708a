"""Scenarios of tests/runner/test_checkpoint_remote_backend_args.py, run on every rank of a
2-process gloo group (DDP on the CPU) with no AWS endpoint or credentials in the environment:
whole-file checkpoints go to the test's loopback S3 server (bucket in TREADLE_TEST_BUCKET) with
the endpoint and credentials given only in CheckpointHook's backend_args (JSON in
TREADLE_TEST_BACKEND_ARGS), and runs of 2 processes resume from them with ``resume=True``."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

from iter_counter import CountIters
from runner_toy_model import toy_store_cfg

from treadle.runner.runner import Runner


def _run(work_dir, counter, **overrides):
    """Train the toy (10 iterations, saving iter_4/8/10.pth) with its checkpoints on S3."""
    backend_args = json.loads(os.environ["TREADLE_TEST_BACKEND_ARGS"])
    out_dir = f"s3://{os.environ['TREADLE_TEST_BUCKET']}/ckpts"
    cfg = toy_store_cfg(work_dir, out_dir, backend_args=backend_args)
    cfg.update(launcher="pytorch", custom_hooks=[counter], **overrides)
    runner = Runner(**cfg)
    runner.train()
    weights = {key: value.tolist() for key, value in runner.model.module.state_dict().items()}
    return {"iter": runner.iter, "trained": counter.trained, "weights": weights}


def scenario_save_then_resume_from_s3_on_two_ranks(context):
    work_dir = os.path.join(context["out_dir"], "first", "run")
    saved = _run(work_dir, CountIters())
    # The same work_dir (its pointer names the checkpoint on S3)...
    again = _run(work_dir, CountIters(), resume=True)
    # ...and a new one on another machine, whose out_dir on S3 is all that is left.
    elsewhere = os.path.join(context["out_dir"], "second", "run")
    fresh = _run(elsewhere, CountIters(), resume=True)
    return {"saved": saved, "again": again, "fresh": fresh}
