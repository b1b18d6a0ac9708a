"""A dead or stuck rank gives a clear error (issue 32): two gloo ranks training with DDP,
rank 1 SIGKILLed or stuck in a hook; rank 0 stops within seconds, naming rank 1, the collective
and the iteration, with and without torchrun. And env_cfg.dist_cfg.timeout's bad values.

The workers are tests/runner/workers/rank_health_worker.py; every process has a hard timeout.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import gloo_group
import pytest
import torch

from treadle.dist import init_dist
from treadle.runner.runner import Runner
from treadle.runner.runner.rank_failure import collective_of, is_collective_failure

WORKER = Path(__file__).parent / "workers" / "rank_health_worker.py"
HARD_TIMEOUT_S = 90
# Long enough for both ranks to start on a loaded machine (it bounds the rendezvous too).
STUCK_TIMEOUT_S = 8


def _start_ranks(mode: str, work_dir: Path, *extra: str) -> list[subprocess.Popen]:
    port = gloo_group.free_port()
    processes = []
    for rank in (0, 1):
        env = gloo_group.clean_environment(
            RANK=str(rank),
            WORLD_SIZE="2",
            LOCAL_RANK=str(rank),
            LOCAL_WORLD_SIZE="2",
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
        )
        processes.append(
            subprocess.Popen(
                [sys.executable, str(WORKER), mode, str(work_dir), *extra],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    return processes


def _wait(process: subprocess.Popen) -> tuple[int, str, float]:
    """(exit status, output, the time it ended), killing it past the hard timeout."""
    try:
        output, _ = process.communicate(timeout=HARD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        output += "\n[killed: still running after the hard timeout]"
    return process.returncode, output, time.time()


def _killed_at(work_dir: Path) -> float:
    return float((work_dir / "killed_at").read_text())


def _start_torchrun(mode: str, work_dir: Path) -> subprocess.Popen:
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--max-restarts",
        "0",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(gloo_group.free_port()),
        str(WORKER),
        mode,
        str(work_dir),
    ]
    return subprocess.Popen(
        command,
        env=gloo_group.clean_environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The four runs at once (much of their time is spent waiting): for each, its work dir
    and ``[(exit status, output, end time)]`` of rank 0 and rank 1."""
    started = {}
    for name in ("kill", "kill_while_busy", "kill_rank0", "stuck"):
        work_dir = tmp_path_factory.mktemp(name)
        extra = (str(STUCK_TIMEOUT_S),) if name == "stuck" else ()
        started[name] = work_dir, _start_ranks(name, work_dir, *extra)
    return {
        name: (work_dir, [_wait(process) for process in processes])
        for name, (work_dir, processes) in started.items()
    }


@pytest.mark.parametrize("mode", ["kill", "kill_while_busy"])
def test_a_killed_rank_is_named_and_the_other_stops_within_seconds(runs, mode):
    work_dir, [(status0, output0, ended0), (status1, _, _)] = runs[mode]
    waited = ended0 - _killed_at(work_dir)
    print(f"\n{mode}: rank 0 exited {waited:.1f} s after rank 1 was killed")
    assert status1 == -9
    assert status0 != 0, output0
    # kill: gloo's connection error in the DDP all-reduce becomes the clear error;
    # kill_while_busy: rank 0 sleeps in a hook, and only its watcher can notice.
    assert "rank 1 died (its process" in output0, output0
    if mode == "kill":
        assert "RankFailureError: rank 0: the DDP gradient all-reduce at iteration" in output0
    else:
        assert "rank 0 stops at iteration 4, in its after_train_iter hooks" in output0
    assert waited < 15, output0


def test_when_rank_0_dies_with_the_store_it_hosts_rank_1_names_it(runs):
    work_dir, [(status0, _, _), (status1, output1, ended1)] = runs["kill_rank0"]
    waited = ended1 - _killed_at(work_dir)
    print(f"\nkill_rank0: rank 1 exited {waited:.1f} s after rank 0 was killed")
    assert status0 == -9
    assert status1 != 0
    assert "RankFailureError: rank 1: the DDP gradient all-reduce at iteration" in output1
    # Rank 0's process is gone, or the store it hosted no longer answers: it is named either way.
    named = ("rank 0 died (its process", "does not answer: rank 0 (at 127.0.0.1:")
    assert any(text in output1 for text in named), output1
    assert waited < 15, output1


def test_a_stuck_rank_is_named_after_dist_cfg_timeout(runs):
    _, [(status0, output0, _), (status1, output1, _)] = runs["stuck"]
    assert status0 != 0 and status1 != 0
    expected = (
        f"rank 0: the DDP gradient all-reduce at iteration 5 timed out after {STUCK_TIMEOUT_S} s "
        "(env_cfg.dist_cfg.timeout): rank 1 did not arrive: it is alive and still at "
        "iteration 4, in its after_train_iter hooks"
    )
    assert expected in output0, output0
    # Rank 1, asleep for 60 s, is told to stop instead of finding out on its own.
    assert f"rank 1: rank 0 stopped the run: {expected}" in output1, output1
    assert "[killed" not in output0 + output1


@pytest.mark.skipif(
    os.environ.get("TREADLE_LONG_TESTS") != "1", reason="about 20 s: set TREADLE_LONG_TESTS=1"
)
def test_under_torchrun_the_output_names_the_killed_rank(tmp_path):
    [(status, output, ended)] = [_wait(_start_torchrun("kill", tmp_path))]
    work_dir = tmp_path
    print(f"\ntorchrun: the agent exited {ended - _killed_at(work_dir):.1f} s after the kill")
    assert status != 0
    # The survivor's own error, or else the agent's summary of the failure.
    assert "rank 1 died (its process" in output or "rank: 1 (local_rank: 1)" in output, output
    assert "[killed" not in output


@pytest.mark.parametrize(
    ("timeout", "error", "message"),
    [
        (
            "5m",
            TypeError,
            "env_cfg.dist_cfg.timeout is a number of seconds (e.g. timeout=1800), got str: '5m'",
        ),
        (False, ValueError, "env_cfg.dist_cfg.timeout must be a positive, finite number"),
        (0, ValueError, "env_cfg.dist_cfg.timeout must be a positive, finite number of seconds"),
        (-5, ValueError, "leave it unset for torch's default), got -5"),
        (math.inf, ValueError, "got inf"),
        (math.nan, ValueError, "got nan"),
    ],
)
def test_bad_timeouts_are_refused_naming_the_key(tmp_path, monkeypatch, timeout, error, message):
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.setenv(variable, "1")  # the Runner would set them in this process
    with pytest.raises(error) as raised:
        Runner(
            model=dict(type="RunnerToyModel"),
            work_dir=str(tmp_path),
            launcher="pytorch",
            env_cfg=dict(dist_cfg=dict(backend="gloo", timeout=timeout)),
        )
    assert message in str(raised.value)


def test_a_bool_timeout_is_read_as_mmengine_reads_it_with_a_warning():
    from treadle.dist.launch import check_timeout

    with pytest.warns(UserWarning, match=r"timeout=True is read as 1 s, as MMEngine reads it"):
        assert check_timeout(True).total_seconds() == 1


def test_a_timeout_of_another_type_names_mmengines_phrase():
    from treadle.dist.launch import check_timeout

    with pytest.raises(TypeError, match="must be provided as timeout in seconds"):
        check_timeout([1800])


def test_init_dist_refuses_a_negative_timeout():
    with pytest.raises(ValueError, match=r"^timeout must be a positive, finite number"):
        init_dist("pytorch", backend="gloo", timeout=-1)


def test_errors_that_only_say_timed_out_are_not_taken_for_a_rank_failure():
    assert not is_collective_failure(RuntimeError("DataLoader timed out after 60 seconds"))
    gloo = "[gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting 5000ms for recv"
    assert is_collective_failure(RuntimeError(gloo))


def test_the_failed_collective_is_named_with_the_line_that_called_it():
    # Without a process group torch refuses the call from inside torch.distributed.
    with pytest.raises(Exception) as raised:
        torch.distributed.all_reduce(torch.zeros(1))
    named = collective_of(raised.value)
    assert named.startswith("torch.distributed.all_reduce (called from "), named
    assert "test_fault_ranks_health.py:" in named, named
