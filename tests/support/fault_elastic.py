"""The kill -9 harness under torchrun: the README's main job as 2 gloo ranks started by
``python -m torch.distributed.run`` (torchrun), killed with SIGKILL, restarted by torchrun's
elastic agent (``--max-restarts``) or, for a whole "machine", started again by the harness, and
resumed by treadle (``--resume``); at the end its final weights must equal those of the
2-process run that was never killed (``DDPKillJob.run_uninterrupted``), bit for bit.

- :class:`TorchrunKillJob`: ``torchrun --max-restarts N --nproc-per-node 2 -m treadle.runner
  train CONFIG --launcher pytorch --resume``; in each start of the workers one rank, drawn at
  random, kills itself at its n-th checkpoint save (n drawn at random): rank 0 somewhere in
  the write (a partial file, before the rename, before the pointer...), another rank as it
  enters the save. The agent sees the dead rank, stops the other one and starts both again.
- :class:`TwoNodeKillJob`: two torchrun agents on this host, ``--nnodes 2 --nproc-per-node 1
  --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:PORT``, two simulated machines. The second
  "machine" dies whole (its worker kills its agent, then itself, at its n-th save); the first
  one's agent sees its worker fail and waits in the rendezvous; the harness starts the second
  agent again and both resume.

The workers are real ``python -m treadle.runner`` processes started by torchrun, so the kill is
installed by ``fault_elastic_inject/sitecustomize.py`` (on PYTHONPATH) from the plan in
``TREADLE_FAULT_PLAN``: a list of ``{"restart": r, "rank": k or None, "point": "in_save",
"nth": n, "node": bool}``, one entry per start of the workers (``TORCHELASTIC_RESTART_COUNT``).

Example:
    >>> job = TorchrunKillJob(tmp / "job", options=["train_cfg.max_epochs=12"])
    >>> report = job.run_with_restarts(torchrun_plan(seed=0, kills=2), reference)
    >>> report.kills
    2
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from fault_kill import POINTS, Attempt, DDPKillJob, KillReport, _free_port, assert_same_weights

SUPPORT = Path(__file__).resolve().parent
INJECT = SUPPORT / "fault_elastic_inject"
_RESUMED = re.compile(r"resumed epoch: (\d+), iter: (\d+)")
_WORKER_KILLED = re.compile(r"failed \(exitcode: -9\) local_rank: (\d+)")


# ------------------------------------------------------------------ in the worker


def _kill_node() -> None:
    """A whole machine dies: its torchrun agent (this worker's parent), then this worker."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.kill(os.getppid(), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)


def install_planned_kill(plan: str) -> None:
    """Install the kill of ``plan`` (JSON) for this worker's restart count and rank, if any."""
    import fault_kill

    restart = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
    rank = int(os.environ["RANK"])
    for step in json.loads(plan):
        if step["restart"] == restart and step["rank"] in (None, rank):
            if step.get("node"):
                fault_kill._kill_self = _kill_node
            fault_kill._install(step["point"], step["nth"])
            return


# ------------------------------------------------------------------ plans


def torchrun_plan(seed: int, kills: int, world_size: int = 2) -> list[dict]:
    """One kill in each of the first ``kills`` starts: a random rank at its 1st to 3rd save;
    rank 0, which writes the checkpoints, at a random point of the write (half a file written,
    before the rename, before the pointer...), another rank as it enters the save."""
    rng = random.Random(seed)
    plan = []
    for restart in range(kills):
        rank = rng.randrange(world_size)
        # Not after_remove: a start that resumes late may save too few times to delete one.
        point = rng.choice(POINTS[:4]) if rank == 0 else "in_save"
        nth = rng.randint(1, 3)
        plan.append({"restart": restart, "rank": rank, "point": point, "nth": nth, "node": False})
    return plan


def node_plan(seed: int, kills: int) -> list[dict]:
    """One whole-machine death per start of the second machine, at its 1st to 3rd save."""
    rng = random.Random(seed)
    return [
        {"restart": 0, "rank": None, "point": "in_save", "nth": rng.randint(1, 3), "node": True}
        for _ in range(kills)
    ]


# ------------------------------------------------------------------ in the harness


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as listing:
                found += [int(child) for child in listing.read().split()]
    except OSError:
        pass
    return found


def kill_tree(process: subprocess.Popen) -> None:
    """SIGKILL an agent and its workers (torchrun starts each worker in a session of its own,
    so killing the agent's process group would leave them running)."""
    for pid in [*_children(process.pid), process.pid]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    process.wait()


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


class TorchrunKillJob(DDPKillJob):
    """The DDP job (2 ranks, gloo) started by torchrun; see the module docstring."""

    nproc_per_node = 2

    def environment(self, plan: list[dict] | None) -> dict[str, str]:
        path = [str(INJECT), str(SUPPORT), os.environ.get("PYTHONPATH", "")]
        env = {
            **os.environ,
            **self.env,
            # The forkserver's children run with one thread (set_num_threads(1)): the same
            # arithmetic, so the same bits.
            "OMP_NUM_THREADS": "1",
            "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": os.pathsep.join(p for p in path if p),
        }
        env.pop("TREADLE_FAULT_PLAN", None)
        if plan:
            env["TREADLE_FAULT_PLAN"] = json.dumps(plan)
        return env

    def command(self, launch: list[str]) -> list[str]:
        module = ["-m", "treadle.runner", *self.argv(self.work_dir)]
        return [sys.executable, "-m", "torch.distributed.run", *launch, *module]

    def launch(self, launch: list[str], plan: list[dict] | None, log_name: str) -> Any:
        log = open(self.work_dir / log_name, "w")  # noqa: SIM115 - the child writes it
        try:
            return subprocess.Popen(
                self.command(launch), stdout=log, stderr=subprocess.STDOUT,
                env=self.environment(plan), cwd=str(self.work_dir), start_new_session=True,
            )  # fmt: skip
        finally:
            log.close()

    def _wait(self, process: Any, timeout: float, log_name: str) -> int:
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            kill_tree(process)
            raise AssertionError(
                f"{self.work_dir}/{log_name}: hung for {timeout} s:\n" + self._tail(log_name)
            ) from None

    def _resumes(self, log_name: str) -> list[int]:
        return [int(m.group(2)) for m in _RESUMED.finditer((self.work_dir / log_name).read_text())]

    def run_with_restarts(
        self, plan: list[dict], reference: dict, timeout: float = 180
    ) -> KillReport:
        """One torchrun with ``--max-restarts`` (3 at least, as the README says); every start
        of the workers in ``plan`` loses a rank; the agent restarts the workers and treadle
        resumes. Checks: torchrun ends with status 0 after exactly the planned kills, every
        start after the first checkpoint resumed and the resumes never went back, the pointer
        names a file, the weights are ``reference``'s."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        launch = [
            "--max-restarts", str(max(3, len(plan))),
            "--nproc-per-node", str(self.nproc_per_node),
        ]  # fmt: skip
        started = time.monotonic()
        log = "torchrun.log"
        code = self._wait(self.launch(launch, plan, log), timeout, log)
        text = (self.work_dir / log).read_text()
        if code != 0:
            raise AssertionError(f"torchrun ended with {code}:\n" + self._tail(log))
        killed = [int(m.group(1)) for m in _WORKER_KILLED.finditer(text)]
        resumes = self._resumes(log)
        report = KillReport(completed=1)
        for number, step in enumerate(plan):
            reached = number < len(killed)
            report.attempts.append(
                Attempt(
                    ("at", step["point"], step["nth"]), -signal.SIGKILL if reached else 0,
                    time.monotonic() - started, None, None,
                )
            )  # fmt: skip
        if len(killed) != len(plan):
            raise AssertionError(
                f"planned {len(plan)} kills, torchrun saw {killed}:\n{text[-3000:]}"
            )
        if resumes != sorted(resumes) or len(resumes) < len(killed) - 1:
            raise AssertionError(f"resumed at iterations {resumes} after {killed}:\n{text[-3000:]}")
        self.check_pointer()
        assert_same_weights(self.final_weights(), reference)
        return report


class TwoNodeKillJob(TorchrunKillJob):
    """The job on two simulated machines: two torchrun agents with one worker each, c10d
    rendezvous on 127.0.0.1 (see the module docstring)."""

    nproc_per_node = 1

    def environment(self, plan: list[dict] | None) -> dict[str, str]:
        # What the README's two-machine command sets: with the store the agent shares (torch
        # 2.13's default) a machine that starts again waits forever in the rendezvous.
        return {**super().environment(plan), "TORCH_DISABLE_SHARE_RDZV_TCP_STORE": "1"}

    def node_launch(self, port: int) -> list[str]:
        # What a user types on each machine, with the first machine's address for 127.0.0.1.
        return [
            "--nnodes", "2", "--nproc-per-node", "1", "--max-restarts", "3",
            "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}",
            "--rdzv-id", self.work_dir.name,
        ]  # fmt: skip

    def run_with_node_kills(
        self, plan: list[dict], reference: dict, timeout: float = 180
    ) -> KillReport:
        """Start both machines; each entry of ``plan`` kills the second machine whole once (at
        a save of its worker); the harness starts it again; at the end both must have ended
        with status 0 and the weights must be ``reference``'s."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        port = _free_port()
        launch = self.node_launch(port)
        deadline = time.monotonic() + timeout
        first = self.launch(launch, None, "node0.log")
        while not _listening(port):  # the first machine hosts the rendezvous
            if first.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("the first machine did not start:\n" + self._tail("node0.log"))
            time.sleep(0.1)
        report = KillReport()
        saved_before_a_kill = False
        try:
            for start in range(len(plan) + 1):
                step = [plan[start]] if start < len(plan) else None
                log = f"node1.start{start}.log"
                started = time.monotonic()
                second = self.launch(launch, step, log)
                code = self._wait(second, max(1.0, deadline - time.monotonic()), log)
                kill = ("at", step[0]["point"], step[0]["nth"]) if step else None
                report.attempts.append(Attempt(kill, code, time.monotonic() - started, None, None))
                if code == 0:
                    break
                if code == -signal.SIGKILL and self.newest_complete_iter() is not None:
                    saved_before_a_kill = True
                if code != -signal.SIGKILL:
                    raise AssertionError(
                        f"the second machine ended with {code}:\n" + self._tail(log)
                    )
            code = self._wait(first, max(1.0, deadline - time.monotonic()), "node0.log")
        finally:
            if first.poll() is None:
                kill_tree(first)
        if code != 0:
            raise AssertionError(
                f"the first machine ended with {code}:\n" + self._tail("node0.log")
            )
        # Rank 0 logs the resume; the rendezvous may give rank 0 to either machine.
        logs = ["node0.log", *(p.name for p in self.work_dir.glob("node1.start*.log"))]
        resumes = [iteration for log in logs for iteration in self._resumes(log)]
        if saved_before_a_kill and not resumes:
            raise AssertionError("no resume after a machine died:\n" + self._tail("node0.log"))
        report.completed = 1
        self.check_pointer()
        assert_same_weights(self.final_weights(), reference)
        return report
