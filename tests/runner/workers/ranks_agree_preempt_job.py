"""One rank of a 2-process DDP run on gloo that tests/runner/test_fault_ranks_agree.py starts
with torchrun's variables (RANK, WORLD_SIZE, MASTER_ADDR...):

    python ranks_agree_preempt_job.py WORK_DIR MODE

MODE ``signal``: rank 1 alone sends itself SIGTERM in iteration 3, as a scheduler that signals
some ranks only; ``resume``: the same command run again (``resume=True``); ``plain``: a run never
stopped (ranks_agree_scenarios.py trains it). A preempted rank prints where it stopped; the
process exits as ``Runner.train`` makes it (75 when preempted); a run that completes writes its
weights to ``WORK_DIR/weights.rank<RANK>.pt``.
"""

import os
import signal
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

import torch
from runner_toy_model import toy_iter_cfg

from treadle.runner.hooks import Hook
from treadle.runner.runner import Runner
from treadle.runner.runner.preemption import TrainingPreempted


class SignalRankOne(Hook):
    """SIGTERM to this process, on rank 1 only, before iteration 3."""

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        if runner.rank == 1 and runner.iter == 2:
            os.kill(os.getpid(), signal.SIGTERM)


def job_cfg(work_dir: str, mode: str) -> dict:
    """The Runner's arguments (ranks_agree_scenarios.py trains the ``plain`` run with them)."""
    return toy_iter_cfg(
        work_dir,
        launcher="pytorch",
        # Losses checked (and the ranks agreeing) every 4 iterations.
        train_cfg=dict(by_epoch=False, max_iters=12, val_interval=100, nonfinite_check_interval=4),
        val_dataloader=None,
        val_evaluator=None,
        val_cfg=None,
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=8, by_epoch=False)),
        custom_hooks=[SignalRankOne()] if mode == "signal" else [],
        resume=mode == "resume",
        experiment_name=f"agree_{mode}",
    )


def main(work_dir: str, mode: str) -> None:
    torch.set_num_threads(1)
    runner = Runner(**job_cfg(work_dir, mode))
    try:
        runner.train()
    except TrainingPreempted as stop:
        # The runner's log is rank 0's only: each rank says where it stopped.
        print(f"rank {runner.rank} preempted after iteration {runner.iter}: {stop.checkpoint}")
        raise
    torch.save(
        runner.model.module.state_dict(), os.path.join(work_dir, f"weights.rank{runner.rank}.pt")
    )


if __name__ == "__main__":
    main(*sys.argv[1:3])
