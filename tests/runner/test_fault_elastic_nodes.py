"""torchrun's elastic runs with treadle's ``elastic``: two simulated machines (two torchrun
agents on this host, ``--nnodes 1:2 --nproc-per-node 1``, c10d rendezvous on 127.0.0.1), the
training set to ``elastic = dict(global_batch_size=8, micro_batch_size=4)`` and ``--resume``.
One machine, drawn at random, is SIGKILLed whole at a random moment after a checkpoint: the
other one's agent re-rendezvouses alone and its worker resumes the last complete checkpoint at
world size 1; the killed machine's agent is started again, the survivor's agent restarts its
worker for it (treadle saves ``preempted.pth`` on the agent's SIGTERM) and both resume at world
size 2. The losses of every iteration of every start, and the final weights, equal those of
the uninterrupted 2-process run within 1e-5. See tests/support/fault_elastic_nodes.py.

About 60-90 s on 2 loaded cores (every start of a worker imports torch afresh; the
uninterrupted run trains meanwhile). TREADLE_LONG_TESTS=1 makes 3 kills and rejoins;
``benchmarks/fault_kill_loop.py --variants elastic`` as many as you like.
"""

from __future__ import annotations

import os
import time

from fault_elastic_nodes import ElasticNodesJob, kill_machine

LONG = os.environ.get("TREADLE_LONG_TESTS") == "1"
KILLS = 3 if LONG else 1
# Enough epochs that training outlasts the kills and rejoins while the data is slowed down.
EPOCHS = 20 + 15 * KILLS


def test_a_lost_machine_shrinks_the_run_and_a_rejoined_one_grows_it_exactly(tmp_path):
    started = time.monotonic()
    uninterrupted = ElasticNodesJob(tmp_path / "reference", max_epochs=EPOCHS)
    process = uninterrupted.start_uninterrupted()  # trains while the machines wait
    try:
        job = ElasticNodesJob(tmp_path / "nodes", max_epochs=EPOCHS)
        report = job.run_with_kills_and_rejoins(kills=KILLS, seed=43)
        reference = uninterrupted.uninterrupted_result(process)
    finally:
        if process.poll() is None:
            kill_machine(process)
    job.check_against(reference)
    # Every kill made the survivor resume a 2-process checkpoint alone, every rejoin made both
    # resume a 1-process checkpoint (a start at 1 then 2 when the machines came apart at
    # first would add one more of those).
    assert report.resizes.count((2, 1)) == KILLS, report
    assert report.resizes.count((1, 2)) >= KILLS, report
    assert report.sizes[-1] == 2 and report.sizes.count(1) >= KILLS, report
    print(
        f"\nelastic torchrun: machines killed (machine, at s) {report.kills}, world sizes "
        f"{report.sizes}; shrink {[round(s) for s in report.shrink_s]} s, grow "
        f"{[round(s) for s in report.grow_s]} s; {time.monotonic() - started:.0f} s in all"
    )
