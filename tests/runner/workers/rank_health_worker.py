"""One rank of a 2-process gloo run (DDP, 30 iterations) where rank 1 dies or gets stuck,
for tests/runner/test_fault_ranks_health.py.

    python rank_health_worker.py MODE WORK_DIR [TIMEOUT_S]

MODE, acted on after iteration 4 (rank 0 in the same iteration for ``busy``):
- ``kill``: rank 1 writes the time to WORK_DIR/killed_at and SIGKILLs itself;
- ``kill_while_busy``: the same, while rank 0 sleeps 60 s in its hook (as if blocked in a
  collective that never ends: only the watcher can notice);
- ``kill_rank0``: rank 0, which hosts the store, does what rank 1 does in ``kill``;
- ``stuck``: rank 1 sleeps 60 s in its hook.

The launcher's variables come from the test (by hand) or from torchrun.
"""

import os
import signal
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))

from runner_toy_model import toy_iter_cfg

from treadle.runner.hooks import Hook
from treadle.runner.runner import Runner

MODE, WORK_DIR = sys.argv[1], sys.argv[2]
TIMEOUT_S = float(sys.argv[3]) if len(sys.argv) > 3 else None
FAULT_AT = 4


class Fault(Hook):
    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter != FAULT_AT - 1:
            return
        rank = int(os.environ["RANK"])
        victim = 0 if MODE == "kill_rank0" else 1
        if rank == victim and MODE.startswith("kill"):
            if MODE == "kill_while_busy":
                time.sleep(2)  # rank 0 is asleep by now
            with open(os.path.join(WORK_DIR, "killed_at"), "w") as stamp:
                stamp.write(repr(time.time()))
            os.kill(os.getpid(), signal.SIGKILL)
        if (rank == 1 and MODE == "stuck") or (rank == 0 and MODE == "kill_while_busy"):
            time.sleep(60)


dist_cfg = dict(backend="gloo")
if TIMEOUT_S is not None:
    dist_cfg["timeout"] = TIMEOUT_S
rank = os.environ["RANK"]
cfg = toy_iter_cfg(
    os.path.join(WORK_DIR, f"rank{rank}"),
    launcher="pytorch",
    env_cfg=dict(dist_cfg=dist_cfg),
    train_cfg=dict(by_epoch=False, max_iters=30, val_interval=100),
    val_dataloader=None,
    val_evaluator=None,
    val_cfg=None,
    custom_hooks=[Fault()],
    default_hooks=dict(checkpoint=None),
)
Runner(**cfg).train()
