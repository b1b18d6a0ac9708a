"""The kill -9 test's longer mode: as many SIGKILLs as you ask for, on the README's main job
(epoch variant), its iteration-based variant, with checkpoints on a moto S3 server on
127.0.0.1 (needs boto3 and moto[server]), a 2-process DDP run killed on one rank, the same
run under torchrun (the elastic agent restarts it), on two simulated machines, and on two
machines under ``torchrun --nnodes 1:2`` with ``elastic`` (a machine lost and rejoined: the run
shrinks to 1 process and grows back to 2, losses and weights checked within 1e-5); each
training killed again and again and resumed until it completes, its final weights checked
against a run that was never killed. Prints the kills made, the kills survived (the run
resumed from the newest complete checkpoint, the pointer named an existing file and the
weights came out bit for bit; any failure stops the script with the run's log), the planned
kills the run completed before reaching ("unreached"), and the time taken.

    python benchmarks/fault_kill_loop.py                     # 300 kills, all variants
    python benchmarks/fault_kill_loop.py --kills 1000 --variants epoch iter
    python benchmarks/fault_kill_loop.py --subprocess        # real `python` processes
    python benchmarks/fault_kill_loop.py --kills 30 --variants elastic

The harness lives in tests/support/fault_kill.py (tests/runner/test_fault_kill.py runs it
with a fast default in CI). ``--subprocess`` starts every run as a fresh interpreter
(importing torch each time, seconds a run); the default forks them from a server that
imported torch once.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

import fault_elastic
import fault_elastic_nodes
import fault_kill

VARIANTS = ("epoch", "iter", "s3", "ddp", "torchrun", "nodes", "elastic")


def _moto_env(directory: Path) -> tuple[dict[str, str], str]:
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": f"http://{host}:{port}",
        "AWS_CONFIG_FILE": str(directory / "no-aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(directory / "no-aws-credentials"),
    }
    os.environ.update(env)  # this process lists the bucket to check the checkpoints
    boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"]).create_bucket(Bucket="kills")
    return env, "s3://kills/ckpts"


def run_variant(name: str, kills: int, seconds: float, root: Path, ctx, seed: int) -> tuple:
    directory = root / name
    directory.mkdir()
    started = time.monotonic()
    if name == "ddp":
        job = fault_kill.DDPKillJob(directory / "job", ctx=ctx, options=["train_cfg.max_epochs=12"])
        reference = job.run_uninterrupted(directory / "reference")
        survived = unreached = runs = rounds = 0
        while survived < kills and time.monotonic() - started < seconds:
            job.work_dir = directory / "job" / f"round_{rounds}"
            plan = [("at", "in_save", 1 + (rounds + i) % 3) for i in range(3)] + [("timer", 0.5)]
            report = job.run_ddp_with_kills(plan, reference)
            survived += report.kills
            unreached += sum(1 for a in report.attempts if a.kill and a.exitcode == 0)
            runs += report.runs
            rounds += 1
        return survived, unreached, runs, rounds, time.monotonic() - started
    if name in ("torchrun", "nodes"):
        return run_elastic(name, kills, seconds, directory, ctx, seed)
    if name == "elastic":
        return run_elastic_nodes(kills, seconds, directory, seed)
    env, out_dir = _moto_env(directory) if name == "s3" else ({}, None)
    variant = "iter" if name == "iter" else "epoch"
    job = fault_kill.KillJob(directory / "job", variant=variant, out_dir=out_dir, env=env, ctx=ctx)
    reference = job.run_uninterrupted(directory / "reference")
    points = fault_kill.S3_POINTS if name == "s3" else fault_kill.POINTS
    plan = fault_kill.plan(seed, kills * 2, points=points)
    report = job.run_with_kills(
        plan, reference, deadline=started + seconds, target=kills, timeout=600
    )
    unreached = sum(1 for a in report.attempts if a.kill and a.exitcode == 0)
    return report.kills, unreached, report.runs, report.completed, time.monotonic() - started


def run_elastic(name: str, kills: int, seconds: float, directory: Path, ctx, seed: int) -> tuple:
    """torchrun restarting 2 ranks (a random rank killed at a random save in each start), or
    two simulated machines (the second killed whole and started again); rounds of a few kills
    each, every round checked against the 2-process run never killed."""
    started = time.monotonic()
    options = ["train_cfg.max_epochs=12"]
    reference = fault_kill.DDPKillJob(
        directory / "ref", ctx=ctx, options=options
    ).run_uninterrupted(directory / "reference")
    survived = unreached = runs = rounds = 0
    while survived < kills and time.monotonic() - started < seconds:
        work_dir = directory / f"round_{rounds}"
        if name == "torchrun":
            job = fault_elastic.TorchrunKillJob(work_dir, options=options)
            plan = fault_elastic.torchrun_plan(seed + rounds, kills=3)
            report = job.run_with_restarts(plan, reference)
        else:
            job = fault_elastic.TwoNodeKillJob(work_dir, options=options)
            plan = fault_elastic.node_plan(seed + rounds, kills=2)
            report = job.run_with_node_kills(plan, reference)
        survived += report.kills
        unreached += sum(1 for a in report.attempts if a.kill and a.exitcode == 0)
        runs += report.runs
        rounds += 1
    return survived, unreached, runs, rounds, time.monotonic() - started


def run_elastic_nodes(kills: int, seconds: float, directory: Path, seed: int) -> tuple:
    """Two machines under ``torchrun --nnodes 1:2`` training with ``elastic``: rounds of up to
    3 kills of a machine drawn at random, each followed by its rejoin (world size 2 -> 1 -> 2),
    every round checked against the uninterrupted 2-process run (losses and weights within
    1e-5)."""
    started = time.monotonic()
    epochs = 20 + 15 * 3  # the same training every round: the reference's
    uninterrupted = fault_elastic_nodes.ElasticNodesJob(directory / "reference", epochs)
    reference = uninterrupted.uninterrupted_result(uninterrupted.start_uninterrupted())
    survived = runs = rounds = 0
    while survived < kills and time.monotonic() - started < seconds:
        count = min(3, kills - survived)
        job = fault_elastic_nodes.ElasticNodesJob(directory / f"round_{rounds}", epochs)
        report = job.run_with_kills_and_rejoins(count, seed + rounds, timeout=120 + 60 * count)
        job.check_against(reference)
        survived += len(report.kills)
        runs += len(report.sizes)
        rounds += 1
    return survived, 0, runs, rounds, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=300, help="kills in all (split evenly)")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--seconds", type=float, default=3600, help="time limit per variant")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--subprocess", action="store_true", help="a fresh python per run")
    args = parser.parse_args()

    ctx = fault_kill.SubprocessContext() if args.subprocess else fault_kill.context()
    per_variant = max(1, args.kills // len(args.variants))
    # Every kill that happened is checked (resume point, pointer, final weights): a failure
    # stops the script with the run's log, so the kills printed were all survived.
    print(
        f"{'variant':8} {'killed':>7} {'survived':>9} {'unreached':>10} {'runs':>6} "
        f"{'trainings':>10} {'seconds':>8}"
    )
    with tempfile.TemporaryDirectory(prefix="fault_kill_") as root:
        for index, name in enumerate(args.variants):
            killed, unreached, runs, trainings, took = run_variant(
                name, per_variant, args.seconds, Path(root), ctx, args.seed + index
            )
            print(
                f"{name:8} {killed:7d} {killed:9d} {unreached:10d} {runs:6d} "
                f"{trainings:10d} {took:8.1f}"
            )


if __name__ == "__main__":
    main()
