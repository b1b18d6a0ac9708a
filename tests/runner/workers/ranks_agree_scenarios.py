"""Scenarios of a 2-process DDP run on gloo (run by tests/runner/test_fault_ranks_agree.py
through tests/support/gloo_group.py) whose loss is NaN on rank 1 only, at iteration 6 (its
sixth training forward), with each ``train_cfg.nonfinite_loss``, and one whose rank 1 alone
receives SIGTERM: what each rank ended with; and the uninterrupted run of
ranks_agree_preempt_job.py, whose preempted and resumed runs the test compares with it."""

import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

from ranks_agree_preempt_job import job_cfg
from runner_toy_model import toy_iter_cfg
from runner_toys import captured_log
from storage_toys import StorageToyModel  # noqa: F401 (registers the toys)

from treadle.runner.hooks import Hook
from treadle.runner.loops import NonFiniteLossError
from treadle.runner.runner import Runner
from treadle.runner.runner.preemption import TrainingPreempted

NAN_CALL = 5  # 0-based forward call: iteration 6


class SignalRankOne(Hook):
    """SIGTERM to this process, on rank 1 only, before iteration 3."""

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        if runner.rank == 1 and runner.iter == 2:
            os.kill(os.getpid(), signal.SIGTERM)


def _train(context, name, nan=True, custom_hooks=(), **train):
    nan_at = [NAN_CALL] if context["rank"] == 1 and nan else []
    cfg = toy_iter_cfg(
        os.path.join(context["out_dir"], name),
        launcher="pytorch",
        model=dict(type="StorageToyModel", nan_at=nan_at),
        train_cfg=dict(by_epoch=False, max_iters=10, val_interval=100, **train),
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=4, by_epoch=False)),
        custom_hooks=list(custom_hooks),
        experiment_name=name,
    )
    runner = Runner(**cfg)
    error = preempted = None
    with captured_log(runner.logger) as log:
        try:
            runner.train()
        except NonFiniteLossError as stop:
            error = dict(message=str(stop), iteration=stop.iteration, ranks=stop.ranks)
        except TrainingPreempted as stop:
            preempted = dict(code=stop.code, checkpoint=stop.checkpoint)
    weights = {k: v.tolist() for k, v in runner.model.module.state_dict().items()}
    return dict(
        error=error,
        preempted=preempted,
        iter=runner.iter,
        log="\n".join(log.messages),
        weights=weights,
        rollbacks=runner.message_hub.get_info("nonfinite_rollbacks", 0),
    )


def scenario_stop(context):
    # The default check interval (50): the NaN is found at the check before the checkpoint of
    # iteration 8, which every rank makes while rank 0 alone builds the file.
    return _train(context, "stop", nonfinite_loss="stop")


def scenario_skip(context):
    return _train(context, "skip", nonfinite_loss="skip")


def scenario_rollback(context):
    return _train(context, "rollback", nonfinite_loss="rollback", nonfinite_check_interval=2)


def scenario_skip_preempted(context):
    # With 'skip' the ranks agree at every step: SIGTERM to rank 1 before iteration 3 is told
    # to rank 0 in iteration 3; both stop after iteration 4.
    return _train(context, "skip_sigterm", nan=False, custom_hooks=[SignalRankOne()],
                  nonfinite_loss="skip")  # fmt: skip


def scenario_plain_preempt_job(context):
    # The weights of ranks_agree_preempt_job.py's run when never stopped.
    runner = Runner(**job_cfg(os.path.join(context["out_dir"], "plain"), "plain"))
    runner.train()
    return {k: v.tolist() for k, v in runner.model.module.state_dict().items()}
