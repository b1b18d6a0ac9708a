"""Scenarios of CheckpointHook's save failures in a 2-process gloo group (run by
tests/runner/test_fault_storage_distributed.py through tests/support/gloo_group.py): rank 0
writes the checkpoint and its write fails (a full disk); every rank must go on, or stop,
together."""

import errno
import logging
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

from runner_toy_model import toy_iter_cfg

import treadle.dist as dist
from treadle.runner.checkpoint import io
from treadle.runner.hooks.checkpoint_failure import CheckpointSaveError
from treadle.runner.runner import Runner

GLOO = dict(dist_cfg=dict(backend="gloo"))
_write = io.write_checkpoint_file


def _full_disk_at_iter_8(checkpoint, temporary, fmt, filename):
    if str(filename).endswith("iter_8.pth"):
        raise OSError(errno.ENOSPC, "No space left on device", temporary)
    return _write(checkpoint, temporary, fmt, filename)


class _Errors(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _run(context, name, on_save_error):
    io.write_checkpoint_file = _full_disk_at_iter_8
    work_dir = os.path.join(context["out_dir"], name)
    checkpoint = dict(
        type="CheckpointHook", interval=4, by_epoch=False, on_save_error=on_save_error
    )
    cfg = toy_iter_cfg(
        work_dir,
        launcher="pytorch",
        env_cfg=GLOO,
        experiment_name=name,
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        default_hooks=dict(checkpoint=checkpoint),
    )
    runner = Runner(**cfg)
    errors = _Errors()
    runner.logger.addHandler(errors)
    raised = None
    try:
        runner.train()
    except CheckpointSaveError as error:
        raised = str(error)
    finally:
        io.write_checkpoint_file = _write
    dist.barrier()
    return dict(
        iters=runner.train_loop.iter,
        raised=raised,
        logged=[m for m in errors.messages if "could not save" in m],
        last_ckpt=runner.message_hub.get_info("last_ckpt"),
        files=sorted(n for n in os.listdir(work_dir) if n.endswith(".pth")),
    )


def scenario_continue(context):
    return _run(context, "continue", "continue")


def scenario_stop(context):
    return _run(context, "stop", "stop")
