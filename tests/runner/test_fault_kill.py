"""kill -9 at any moment: the README's main job (and an iteration-based variant) killed with
SIGKILL again and again, many times inside a checkpoint write, locally and to a moto S3 server
on loopback, then run again with ``--resume`` until it completes; and a 2-process DDP run
(gloo) with one rank killed. Every time it resumes from
the newest complete checkpoint and ``last_checkpoint`` names an existing file; the final
weights equal those of a run that was never killed, bit for bit.

At least 30 kills a run of this file, in about a minute on 2 cores (the kills stop at a
deadline; the minimum is checked over the three jobs). ``benchmarks/fault_kill_loop.py`` is
the longer mode: as many kills as you like, with real ``python -m treadle.runner`` processes.
See tests/support/fault_kill.py for how the kills are made. The same job under torchrun (its
elastic agent restarting the ranks) and on two simulated machines is in test_fault_elastic.py.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("sklearn")

from fault_kill import POINTS, S3_POINTS, DDPKillJob, KillJob, context, plan
from s3_server import bucket, moto_endpoint  # noqa: F401

# Kills each job aims for, and the seconds it may spend on them (past the deadline a job only
# finishes the run it is in).
TARGETS = {"epoch": 16, "iter": 12, "s3": 8}
SECONDS = {"epoch": 40, "iter": 30, "s3": 30}
MINIMUM_KILLS = 30
_kills: dict[str, int] = {}


@pytest.fixture(scope="module")
def ctx():
    return context()


def _run(job: KillJob, tmp_path, name: str, points: tuple[str, ...], seed: int):
    reference = job.run_uninterrupted(tmp_path / "reference")
    report = job.run_with_kills(
        plan(seed, kills=4 * TARGETS[name], points=points),
        reference,
        deadline=time.monotonic() + SECONDS[name],
        target=TARGETS[name],
    )
    _kills[name] = report.kills
    # Every job was killed and completed with the weights of the uninterrupted run (checked
    # inside run_with_kills, round after round).
    assert report.completed >= 1
    assert report.kills >= TARGETS[name] // 2, report.attempts
    killed_points = {a.kill[1] for a in report.attempts if a.exitcode == -9 and a.kill[0] == "at"}
    assert len(killed_points) >= 3, report.attempts
    print(
        f"\n{name}: {report.kills} kills survived in {report.runs} runs, "
        f"{report.completed} completed trainings, points {sorted(killed_points)}"
    )
    return report


def test_the_main_job_survives_kills(tmp_path, ctx):
    job = KillJob(tmp_path / "job", variant="epoch", ctx=ctx)
    _run(job, tmp_path, "epoch", POINTS, seed=16)


def test_the_iteration_based_variant_survives_kills(tmp_path, ctx):
    job = KillJob(tmp_path / "job", variant="iter", ctx=ctx)
    _run(job, tmp_path, "iter", POINTS, seed=17)


def test_checkpoints_on_s3_survive_kills(tmp_path, ctx, bucket, moto_endpoint):  # noqa: F811
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": moto_endpoint,
        "AWS_CONFIG_FILE": str(tmp_path / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "no-aws-credentials"),
    }
    job = KillJob(
        tmp_path / "job", variant="epoch", out_dir=f"s3://{bucket}/ckpts", env=env, ctx=ctx
    )
    report = _run(job, tmp_path, "s3", S3_POINTS, seed=18)
    assert any(a.kill and a.kill[1] == "mid_upload" and a.exitcode == -9 for a in report.attempts)


def test_a_ddp_run_survives_kills_of_one_rank(tmp_path, ctx):
    # Rank 1 dies (at a random moment, or as it enters a checkpoint save while rank 0 waits
    # for it in the save's collective); rank 0's next collective fails, the group is started
    # again with --resume, and ends with the weights of a group that was never killed.
    job = DDPKillJob(tmp_path / "job", ctx=ctx, options=["train_cfg.max_epochs=12"])
    reference = job.run_uninterrupted(tmp_path / "reference")
    kills = [("at", "in_save", 2), ("timer", 0.4), ("at", "in_save", 3), ("at", "in_save", 1)]
    report = job.run_ddp_with_kills(kills, reference)
    _kills["ddp"] = report.kills
    assert report.kills >= 3, report.attempts
    print(f"\nddp: {report.kills} kills of rank 1 survived in {report.runs} runs")


def test_at_least_30_kills_in_this_file():
    if not set(TARGETS) <= set(_kills):
        pytest.skip(f"runs after the kill tests ({sorted(_kills)} ran)")
    assert sum(_kills.values()) >= MINIMUM_KILLS, _kills
