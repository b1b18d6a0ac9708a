"""torchrun's own restarts and two simulated machines: the DDP job (2 gloo ranks) started by
``python -m torch.distributed.run``, one rank SIGKILLed in each start of the workers (torchrun's
elastic agent restarts them, treadle resumes with ``--resume``), and a whole second "machine"
(its agent and its worker) SIGKILLed and started again; each ends with the weights of the
2-process run that was never killed, bit for bit. See tests/support/fault_elastic.py. And the
bad input of several processes: resuming with another world size, and machines whose configs
differ.

About 60 s on 2 idle cores, 100 s loaded (every start of a worker imports torch afresh);
TREADLE_LONG_TESTS=1 makes more kills (benchmarks/fault_kill_loop.py --variants torchrun nodes
for as many as you like).
"""

from __future__ import annotations

import os
import shutil
import time

import pytest

pytest.importorskip("sklearn")

from fault_elastic import TorchrunKillJob, TwoNodeKillJob, node_plan, torchrun_plan
from fault_kill import DDPKillJob, KillJob, _free_port, _started, context

LONG = os.environ.get("TREADLE_LONG_TESTS") == "1"
OPTIONS = ["train_cfg.max_epochs=12"]
KILLS = {"torchrun": 3 if LONG else 2, "nodes": 3 if LONG else 1}


@pytest.fixture(scope="module")
def ctx():
    return context()


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory, ctx):
    """The 2-process run (forked ranks, no torchrun) never killed: its work dir and weights."""
    job = DDPKillJob(tmp_path_factory.mktemp("ddp") / "job", ctx=ctx, options=OPTIONS)
    work_dir = tmp_path_factory.mktemp("ddp_reference")
    return work_dir, job.run_uninterrupted(work_dir)


@pytest.fixture(scope="module")
def reference(reference_run):
    return reference_run[1]


def test_torchrun_restarts_and_treadle_resumes(tmp_path, reference):
    # torchrun --max-restarts 3 --nproc-per-node 2 -m treadle.runner train CFG --launcher
    # pytorch --resume, a random rank killed at a random save in each of the first starts.
    started = time.monotonic()
    job = TorchrunKillJob(tmp_path / "job", options=OPTIONS)
    report = job.run_with_restarts(torchrun_plan(seed=32, kills=KILLS["torchrun"]), reference)
    assert report.kills == KILLS["torchrun"], report.attempts
    print(f"\ntorchrun: {report.kills} kills survived in {time.monotonic() - started:.0f} s")


def test_a_machine_killed_whole_joins_again_and_both_resume(tmp_path, reference):
    started = time.monotonic()
    job = TwoNodeKillJob(tmp_path / "nodes", options=OPTIONS)
    report = job.run_with_node_kills(node_plan(seed=33, kills=KILLS["nodes"]), reference)
    assert report.kills == KILLS["nodes"], report.attempts
    print(
        f"\ntwo nodes: {report.kills} machine kills survived in {time.monotonic() - started:.0f} s"
    )


# ------------------------------------------------------------------ bad input


def test_resuming_with_another_world_size_is_refused_naming_both(tmp_path, ctx, reference_run):
    # The 2-process run's checkpoints, resumed by one process: its sampler position and each
    # rank's generators only mean the same samples and draws with 2 processes.
    work_dir = tmp_path / "one_process"
    shutil.copytree(reference_run[0], work_dir)
    job = KillJob(tmp_path / "job", ctx=ctx, options=OPTIONS)
    process = job.start(work_dir, None, "resume.log")
    process.join(120)
    log = (work_dir / "resume.log").read_text()
    assert process.exitcode == 1, log[-3000:]
    assert "saved by a run of 2 processes and this run has 1" in log, log[-3000:]
    assert "resume with 2 processes" in log


def test_machines_with_different_configs_stop_before_training(tmp_path, ctx):
    # Node 1 was started with two other values; both ranks stop at start, naming the keys.
    job = DDPKillJob(tmp_path / "job", ctx=ctx, options=OPTIONS)
    work_dir = tmp_path / "mismatch"
    work_dir.mkdir()
    port = str(_free_port())
    processes = []
    for rank, extra in enumerate(([], ["optim_wrapper.optimizer.lr=0.1", "model.dropout=0.2"])):
        env = dict(
            RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2",
            GROUP_RANK=str(rank), MASTER_ADDR="127.0.0.1", MASTER_PORT=port,
        )  # fmt: skip
        argv = job.argv(work_dir)
        argv[argv.index("--cfg-options") + 1 : 0] = extra
        log = str(work_dir / f"rank{rank}.log")
        processes.append(_started(ctx, (argv, log, env, None)))
    DDPKillJob._end(processes, 120)
    for rank, process in enumerate(processes):
        log = (work_dir / f"rank{rank}.log").read_text()
        assert process.exitcode == 1, log[-3000:]
        assert "do not have the same config; 2 key(s) differ" in log, log[-3000:]
        assert "optim_wrapper.optimizer.lr: rank 0 (node 0, host " in log
        assert "rank 1 (node 1, host " in log and ": 0.1" in log
        assert "model.dropout: rank 0" in log and ": 0.2" in log
        assert "Epoch(train)" not in log
    assert not list(work_dir.glob("*.pth"))
