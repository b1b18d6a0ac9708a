"""kill -9 while checkpoints are written in the background (``CheckpointHook(async_save=True)``):
the iteration-based variant of the kill harness (a checkpoint every 4 iterations,
max_keep_ckpts=1) killed again and again, at the points of a checkpoint write that now run in
the writer's thread (mid-write, before the rename, before and during the pointer update, after
the old checkpoint's deletion) and at random moments, then run again with ``--resume`` until it
completes. Every time it resumes from the newest complete checkpoint and ends with the weights
of a run that was never killed (an uninterrupted run with async saves), bit for bit.

At least 5 kills in about 25 seconds on 2 cores; see tests/support/fault_kill.py for how the
kills are made, and tests/runner/test_fault_kill.py for the synchronous saves.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("sklearn")

from fault_kill import POINTS, KillJob, context, plan

TARGET = 6
SECONDS = 25
ASYNC = ["default_hooks.checkpoint.async_save=True"]


def test_the_iteration_based_variant_survives_kills_during_async_saves(tmp_path):
    job = KillJob(tmp_path / "job", variant="iter", ctx=context(), options=ASYNC)
    reference = job.run_uninterrupted(tmp_path / "reference")
    log = (tmp_path / "reference" / "uninterrupted.log").read_text()
    assert "handed to the background writer" in log  # the saves were asynchronous
    report = job.run_with_kills(
        plan(19, kills=4 * TARGET, points=POINTS),
        reference,
        deadline=time.monotonic() + SECONDS,
        target=TARGET,
    )
    # Every round completed with the weights of the uninterrupted run (checked inside
    # run_with_kills).
    assert report.completed >= 1
    assert report.kills >= 5, report.attempts
    killed_points = {a.kill[1] for a in report.attempts if a.exitcode == -9 and a.kill[0] == "at"}
    assert len(killed_points) >= 3, report.attempts
    print(
        f"\nasync iter: {report.kills} kills survived in {report.runs} runs, "
        f"{report.completed} completed trainings, points {sorted(killed_points)}"
    )
