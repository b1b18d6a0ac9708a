"""Ranks that agree (issue 32): in a 2-process DDP run on gloo, a NaN loss on rank 1 only and
a SIGTERM to rank 1 only are acted on by both ranks together: no hang, the same ending on every
rank, messages that name the rank and the iteration, identical weights after a skip, and one
preempted checkpoint of one iteration that both ranks resume from.

The NaN scenarios, a SIGTERM in a run that skips and the uninterrupted reference run share one
process group (workers/ranks_agree_scenarios.py); the preemption test starts
workers/ranks_agree_preempt_job.py as two ranks; hard timeouts everywhere.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import gloo_group
import pytest
import torch

from treadle.runner.runner.preemption import EXIT_CODE

WORKERS = Path(__file__).parent / "workers"
SCENARIOS = WORKERS / "ranks_agree_scenarios.py"
PREEMPT_JOB = WORKERS / "ranks_agree_preempt_job.py"
TIMEOUT_S = 150  # both ranks together (a group took ~35 s on a loaded 2-core machine)


@pytest.fixture(scope="module")
def group_runs(tmp_path_factory):
    results = gloo_group.run_group(SCENARIOS, 2, tmp_path_factory.mktemp("agree"))
    return lambda name: [gloo_group.scenario_value(results, rank, name) for rank in (0, 1)]


def test_stop_ends_every_rank_with_the_error_naming_rank_1(group_runs):
    first, second = group_runs("scenario_stop")
    for run in (first, second):
        error = run["error"]
        assert error is not None, "a rank did not stop"
        # Rank 1's NaN went into the averaged gradients: rank 0's next loss is NaN too.
        assert (error["iteration"], error["ranks"]) == (6, (0, 1))
        assert error["message"].startswith(
            "the training loss is not finite at iteration 6 on rank 1 and iteration 7 on rank 0;"
        )
        assert "training stops on every rank" in error["message"]
        # Found at the check before iteration 8's checkpoint, which no rank wrote.
        assert run["iter"] == 7
    assert (
        "on this rank (1) it is nan at iteration 6, from the loss term loss_reg=nan;"
        in (second["error"]["message"])
    )
    assert "on this rank (0) it is nan at iteration 7" in first["error"]["message"]


def test_skip_drops_the_same_batch_on_every_rank(group_runs):
    first, second = group_runs("scenario_skip")
    for run in (first, second):
        assert run["error"] is None and run["iter"] == 10
        assert (
            "skipped the batch on every rank: the loss is not finite at iteration 6 on rank 1"
            in run["log"]
        )
    assert "(on rank 1 it is nan;" in second["log"]
    assert first["weights"] == second["weights"]
    assert all(torch.isfinite(torch.tensor(v)).all() for v in first["weights"].values())


def test_rollback_goes_back_on_every_rank(group_runs):
    first, second = group_runs("scenario_rollback")
    for run in (first, second):
        assert run["error"] is None and run["iter"] == 10 and run["rollbacks"] == 1
        assert "the training loss is not finite at iteration 6 on rank 1;" in run["log"]
        assert "rolled back the weights and the optimizer state to" in run["log"]
        assert "iter_4.pth (iteration 4)" in run["log"]
    assert "on this rank (0) the losses were finite" in first["log"]
    assert "on this rank (1) it is nan at iteration 6" in second["log"]
    assert first["weights"] == second["weights"]


# -- preemption


def test_sigterm_to_one_rank_stops_both_in_a_run_that_skips(group_runs):
    first, second = group_runs("scenario_skip_preempted")
    for run in (first, second):
        assert run["preempted"] is not None and run["preempted"]["code"] == EXIT_CODE
        assert run["iter"] == 4
        assert run["preempted"]["checkpoint"].endswith("preempted.pth")
    assert "SIGTERM received (SIGTERM on rank 1): every rank saves" in first["log"]


def _group(work_dir: Path, mode: str, log: str) -> list[int | None]:
    """Run the job as two ranks; their exit statuses (None: killed after TIMEOUT_S)."""
    port = gloo_group.free_port()
    processes = []
    for rank in range(2):
        env = gloo_group.clean_environment(
            RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2",
            MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
        )  # fmt: skip
        with open(work_dir / f"{log}.rank{rank}", "w") as out:
            command = [sys.executable, str(PREEMPT_JOB), str(work_dir), mode]
            processes.append(
                subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
            )
    codes = []
    deadline = time.monotonic() + TIMEOUT_S
    for process in processes:
        try:
            codes.append(process.wait(max(1.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            codes.append(None)
    return codes


def _logs(work_dir: Path, log: str) -> list[str]:
    return [(work_dir / f"{log}.rank{rank}").read_text() for rank in (0, 1)]


def test_sigterm_to_one_rank_preempts_both_at_the_same_iteration(tmp_path, group_runs):
    work_dir = tmp_path / "job"
    work_dir.mkdir()
    codes = _group(work_dir, "signal", "signal.log")
    logs = _logs(work_dir, "signal.log")
    assert codes == [EXIT_CODE, EXIT_CODE], "\n".join(log[-3000:] for log in logs)
    saved = work_dir / "preempted.pth"
    meta = torch.load(saved, weights_only=False)["meta"]
    # Signalled before iteration 3, agreed at the check of iteration 4, stopped after the next.
    assert meta["iter"] == 5
    said = re.search(r"SIGTERM received \(SIGTERM on rank 1\): every rank saves (\S+) "
                     r"after iteration (\d+) and stops", logs[0])  # fmt: skip
    assert said is not None, logs[0][-3000:]
    assert (said.group(1), int(said.group(2))) == (str(saved), meta["iter"])
    for rank, log in enumerate(logs):
        assert f"rank {rank} preempted after iteration 5: {saved}" in log, log[-3000:]
    assert (work_dir / "last_checkpoint").read_text() == saved.name
    # The same command again resumes both ranks from it, to the weights of a run never stopped.
    codes = _group(work_dir, "resume", "resume.log")
    logs = _logs(work_dir, "resume.log")
    assert codes == [0, 0], "\n".join(log[-3000:] for log in logs)
    assert f"resumed epoch: 0, iter: {meta['iter']}" in logs[0]
    expected = group_runs("scenario_plain_preempt_job")[0]
    for rank in (0, 1):
        got = torch.load(work_dir / f"weights.rank{rank}.pt")
        assert {k: v.tolist() for k, v in got.items()} == expected, f"rank {rank}"


# -- in one process: nothing to agree on, no collective


def test_one_process_agrees_alone_without_a_collective(monkeypatch):
    from treadle import dist
    from treadle.runner.loops.rank_agreement import RankAgreement, describe_ranks

    def no_collective(*args, **kwargs):
        raise AssertionError("a run of one process made a collective")

    monkeypatch.setattr(dist, "all_reduce", no_collective)
    agreement = RankAgreement()
    assert not agreement.active()
    assert agreement.agree(0) == {} and agreement.agree(7) == {0: 7}
    assert describe_ranks({3: 9, 1: 7, 0: 9}) == (
        "iteration 7 on rank 1, iteration 9 on rank 0 and iteration 9 on rank 3"
    )


def test_a_skipper_that_agrees_needs_the_iteration():
    from treadle.runner.loops.nonfinite import SkipNonFiniteOptimWrapper
    from treadle.runner.loops.rank_agreement import RankAgreement

    with pytest.raises(ValueError, match=r"agreement=\.\.\.\) needs iteration="):
        SkipNonFiniteOptimWrapper(object(), agreement=RankAgreement())
