"""The elastic torchrun harness: two simulated machines, ``torchrun --nnodes 1:2
--nproc-per-node 1`` each, training with ``elastic = dict(global_batch_size=8, ...)`` and
``--resume``; one machine is SIGKILLed whole (its agent and its worker) at a random moment after
a checkpoint, the other one's agent re-rendezvouses alone and restarts its worker, which resumes
the last complete checkpoint at world size 1; then the killed machine's agent is started again,
the survivor's agent restarts its worker for the newcomer (torchrun does that when a node waits
to join, within ``--nnodes``), and both resume at world size 2. The losses of every iteration
(each start's ``scalars.json``) and the final weights must equal those of the uninterrupted
2-process run within 1e-5 (another world size sums in another order).

The rendezvous store is hosted by the harness (``--rdzv-conf is_host=false``), as an etcd
server or a third host would be in a cluster: torchrun's c10d store otherwise lives in the agent
of the machine named by ``--rdzv-endpoint`` and dies with it, which would leave the survivor
nothing to re-rendezvous with. So either machine may be the one killed.

Timing: the data set reads at a slow disk's pace while ``<job>.hold`` exists
(``PacedElasticToyDataset``), so training cannot end before the harness has killed and
restarted what it planned; the harness removes the file at the end and the run finishes fast.
The rendezvous timeouts are small (:data:`RDZV_CONF`): a dead machine is noticed after
``keep_alive_interval * keep_alive_max_attempt`` seconds without its heartbeat, and a
rendezvous of fewer than ``--nnodes``'s maximum completes ``last_call_timeout`` seconds after
the minimum arrived.

Example:
    >>> uninterrupted = ElasticNodesJob(tmp / "reference")
    >>> process = uninterrupted.start_uninterrupted()
    >>> job = ElasticNodesJob(tmp / "nodes")
    >>> report = job.run_with_kills_and_rejoins(kills=1, seed=0)
    >>> job.check_against(uninterrupted.uninterrupted_result(process))
    >>> report.sizes  # the world size of each start of the workers
    [2, 1, 2]
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from fault_elastic import TorchrunKillJob, _children
from fault_kill import _free_port

# Small timeouts so that the test stays fast: a dead machine is noticed after 3 s without a
# heartbeat; a rendezvous below the maximum number of machines completes 3 s after the first
# one joined (long enough for both machines that start together to make one group of 2).
RDZV_CONF = (
    "is_host=false,join_timeout=120,last_call_timeout=3,close_timeout=10,"
    "keep_alive_interval=1,keep_alive_max_attempt=3"
)
TOLERANCE = 1e-5
_SIZE = re.compile(r"GPU number: (\d+)")
_RESIZED = re.compile(r"elastic: resuming .*, saved by (\d+) process\(es\), with (\d+)")

CONFIG = """
custom_imports = dict(imports=["elastic_toys"], allow_failed_imports=False)
model = dict(type="ElasticToyModel")
train_dataloader = dict(
    dataset=dict(type="PacedElasticToyDataset", length=30, hold_file={hold!r}, delay={delay}),
    sampler=dict(type="DefaultSampler", shuffle=True),
    batch_size=4,
    num_workers=0,
    collate_fn=dict(type="default_collate"),
)
train_cfg = dict(by_epoch=True, max_epochs={max_epochs})
optim_wrapper = dict(type="OptimWrapper", optimizer=dict(type="Adam", lr=0.02))
param_scheduler = [
    dict(type="LinearLR", start_factor=0.2, by_epoch=False, begin=0, end=8),
    dict(type="MultiStepLR", milestones=[{milestone}], by_epoch=True),
]
default_hooks = dict(
    logger=dict(type="LoggerHook", interval=1),
    checkpoint=dict(type="CheckpointHook", interval=4, by_epoch=False, max_keep_ckpts=2),
)
log_processor = dict(window_size=1, by_epoch=True)
randomness = dict(seed=3)
env_cfg = dict(dist_cfg=dict(backend="gloo"))
# 8 samples a step at every size: 2 micro-batches of 4 at 1 process, 1 at 2.
elastic = dict(global_batch_size=8, micro_batch_size=4)
"""


@dataclass
class ElasticReport:
    """What happened: the kills (``(machine, seconds after the start)``), the world size of
    each start of the workers in order, and how long each phase took."""

    kills: list[tuple[int, float]] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    resizes: list[tuple[int, int]] = field(default_factory=list)
    shrink_s: list[float] = field(default_factory=list)
    grow_s: list[float] = field(default_factory=list)
    seconds: float = 0.0


def kill_machine(agent: subprocess.Popen) -> None:
    """SIGKILL a whole simulated machine: its agent first (so it cannot react), then its
    workers (each in a session of its own)."""
    workers = _children(agent.pid)
    with contextlib.suppress(ProcessLookupError):
        os.kill(agent.pid, signal.SIGKILL)
    for pid in workers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    agent.wait()


def read_losses(work_dir: Path) -> list[tuple[str, int, float]]:
    """``(start, iteration, loss)`` from the ``scalars.json`` of every start of the run."""
    found = []
    for path in sorted(work_dir.glob("*/vis_data/scalars.json")):
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if "loss" in record and "step" in record:
                    found.append((path.parent.parent.name, int(record["step"]), record["loss"]))
    return found


def assert_losses_match(got: list[tuple[str, int, float]], expected: dict[int, float]) -> None:
    """Every recorded iteration within 1e-5 (relative above 1) of ``expected``, and every
    iteration of ``expected`` recorded by some start."""
    for start, iteration, loss in got:
        want = expected[iteration]
        if abs(loss - want) > TOLERANCE * max(1.0, abs(want)):
            raise AssertionError(
                f"iteration {iteration} of start {start}: loss {loss}, uninterrupted {want}"
            )
    missing = sorted(set(expected) - {iteration for _, iteration, _ in got})
    if missing:
        raise AssertionError(f"no start recorded iterations {missing}")


def assert_close_weights(got: dict, expected: dict) -> None:
    import torch

    assert sorted(got) == sorted(expected)
    for name, tensor in expected.items():
        torch.testing.assert_close(got[name], tensor, rtol=0, atol=TOLERANCE, msg=name)


class ElasticNodesJob(TorchrunKillJob):
    """The elastic toy run in ``work_dir``; its config and hold file beside it."""

    nproc_per_node = 1

    def __init__(self, work_dir: Path, max_epochs: int = 35, delay: float = 0.05) -> None:
        super().__init__(work_dir)
        self.hold = self.work_dir.parent / f"{self.work_dir.name}.hold"
        self.config = self.work_dir.parent / f"{self.work_dir.name}_config.py"
        self.config.write_text(
            CONFIG.format(
                hold=str(self.hold), delay=delay, max_epochs=max_epochs, milestone=max_epochs // 2
            )
        )

    def argv(self, work_dir: Path) -> list[str]:
        return [
            "train", str(self.config), "--work-dir", str(work_dir), "--no-progress",
            "--resume", "--launcher", "pytorch",
        ]  # fmt: skip

    def environment(self, plan: list[dict] | None) -> dict[str, str]:
        # The agents log their rendezvous (LOGLEVEL); no shared agent store (see
        # TwoNodeKillJob: a machine that starts again would wait in the rendezvous forever).
        env = super().environment(plan)
        env.update(TORCH_DISABLE_SHARE_RDZV_TCP_STORE="1", LOGLEVEL="INFO")
        return env

    def node_launch(self, port: int, max_restarts: int) -> list[str]:
        """What a user types on each machine (the rendezvous host's address for 127.0.0.1)."""
        return [
            "--nnodes", "1:2", "--nproc-per-node", "1", "--max-restarts", str(max_restarts),
            "--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}",
            "--rdzv-id", self.work_dir.name, "--rdzv-conf", RDZV_CONF,
        ]  # fmt: skip

    # -- the uninterrupted run

    def start_uninterrupted(self) -> subprocess.Popen:
        """Start one torchrun of 2 processes on one machine, never killed (it may run while
        the elastic run waits on rendezvous and sleeps: :meth:`uninterrupted_result`)."""
        self.work_dir.mkdir(parents=True, exist_ok=True)
        launch = ["--standalone", "--nnodes", "1", "--nproc-per-node", "2"]
        return self.launch(launch, None, "uninterrupted.log")

    def uninterrupted_result(
        self, process: subprocess.Popen, timeout: float = 240
    ) -> tuple[dict[int, float], dict]:
        """``({iteration: loss}, final weights)`` of the run :meth:`start_uninterrupted`
        started, once it ended with status 0."""
        code = self._wait(process, timeout, "uninterrupted.log")
        if code != 0:
            raise AssertionError(
                f"the uninterrupted run ended with {code}:\n" + self._tail("uninterrupted.log")
            )
        losses = {iteration: loss for _, iteration, loss in read_losses(self.work_dir)}
        return losses, self.final_weights()

    def check_against(self, reference: tuple[dict[int, float], dict]) -> None:
        """The losses of every start at every iteration and the final weights within 1e-5 of
        ``reference`` (:meth:`uninterrupted_result`), and a pointer that names a file."""
        assert_losses_match(read_losses(self.work_dir), reference[0])
        self.check_pointer()
        assert_close_weights(self.final_weights(), reference[1])

    # -- the elastic run

    def saved_world_size(self) -> int | None:
        """The world size that wrote the checkpoint ``last_checkpoint`` names (None: none yet,
        or it is being replaced)."""
        import torch

        from treadle.runner.checkpoint.pointer import read_pointer

        try:
            path = read_pointer(str(self.work_dir))
            if path is None:
                return None
            checkpoint = torch.load(path, map_location="cpu", weights_only=True)
            return int(checkpoint["meta"]["world_size"])
        except Exception:
            return None

    def _wait_for(self, size: int, agents: dict[int, Any], deadline: float, what: str) -> None:
        """Until a checkpoint saved at world size ``size`` is the newest one; every agent in
        ``agents`` must keep running meanwhile."""
        while self.saved_world_size() != size:
            for machine, agent in agents.items():
                if agent.poll() is not None:
                    early = " (training ended first: more max_epochs)" * (agent.returncode == 0)
                    raise AssertionError(
                        f"machine {machine} ended with {agent.returncode} while waiting for "
                        f"{what}{early}:\n" + self._logs()
                    )
            if time.monotonic() > deadline:
                raise AssertionError(f"no {what} in time:\n" + self._logs())
            time.sleep(0.1)

    def _logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text()[-2500:]}"
            for path in sorted(self.work_dir.glob("node*.log"))
        )

    def run_with_kills_and_rejoins(
        self, kills: int, seed: int, timeout: float = 240
    ) -> ElasticReport:
        """Both machines start; ``kills`` times: once a checkpoint of 2 processes exists, one
        machine drawn at random dies whole at a random moment, the survivor resumes alone
        (a checkpoint of 1 process appears), the dead machine starts again and both resume
        (a checkpoint of 2 processes appears). Then the run finishes; both agents must end
        with status 0 (then compare it: :meth:`check_against`)."""
        import torch.distributed as dist

        rng = random.Random(seed)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        self.hold.touch()
        port = _free_port()
        # The rendezvous store, outliving either machine (see the module docstring).
        store = dist.TCPStore("127.0.0.1", port, is_master=True, wait_for_workers=False,
                              timeout=timedelta(seconds=60))  # fmt: skip
        launch = self.node_launch(port, max_restarts=kills + 2)
        started = time.monotonic()
        deadline = started + timeout
        report = ElasticReport()
        starts = [0, 0]
        logs = {machine: f"node{machine}.start0.log" for machine in (0, 1)}
        agents = {machine: self.launch(launch, None, logs[machine]) for machine in (0, 1)}
        try:
            for _ in range(kills):
                self._wait_for(2, agents, deadline, "checkpoint of 2 processes")
                time.sleep(rng.uniform(0.0, 1.5))  # a random moment of training
                victim = rng.randrange(2)
                kill_machine(agents.pop(victim))
                killed = time.monotonic()
                report.kills.append((victim, round(killed - started, 1)))
                self._wait_for(1, agents, deadline, "checkpoint of 1 process after the kill")
                report.shrink_s.append(time.monotonic() - killed)
                starts[victim] += 1
                rejoined = time.monotonic()
                logs[victim] = f"node{victim}.start{starts[victim]}.log"
                agents[victim] = self.launch(launch, None, logs[victim])
                self._wait_for(2, agents, deadline, "checkpoint of 2 processes after the rejoin")
                report.grow_s.append(time.monotonic() - rejoined)
            self.hold.unlink()
            codes = {m: self._wait(a, max(1.0, deadline - time.monotonic()), logs[m])
                     for m, a in agents.items()}  # fmt: skip
        finally:
            for agent in agents.values():
                if agent.poll() is None:
                    kill_machine(agent)
            del store
        report.seconds = time.monotonic() - started
        if any(codes.values()):
            raise AssertionError(f"the machines ended with {codes}:\n" + self._logs())
        self._read_sizes(report)
        return report

    def _read_sizes(self, report: ElasticReport) -> None:
        # Each start of the workers logs (rank 0) into work_dir/TIMESTAMP/TIMESTAMP.log.
        for log in sorted(self.work_dir.glob("*/[0-9]*_[0-9]*.log")):
            text = log.read_text()
            match = _SIZE.search(text)
            if match:
                report.sizes.append(int(match.group(1)))
            report.resizes += [(int(a), int(b)) for a, b in _RESIZED.findall(text)]
