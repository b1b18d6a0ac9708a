"""The kill -9 harness: run the README's main job (examples/digits) in a child process, kill it
with SIGKILL, run it again with ``--resume``, and so on until it completes; then compare its
final weights with those of a run that was never killed.

Two ways to kill, both a real SIGKILL of the child:

- ``("timer", seconds)``: the harness kills the child that many seconds after starting it;
- ``("at", point, n)``: the child kills itself the ``n``-th time it reaches ``point``, one of
  :data:`POINTS`: inside a checkpoint write (half the bytes written), before the rename that
  puts it in place, between the checkpoint and the pointer, inside the pointer write, right
  after max_keep_ckpts deleted an old file, and inside an upload to S3 (half the body sent to
  the server, then the connection dies with the process); ``in_save`` (entering
  Runner.save_checkpoint, every rank) is for the DDP job's rank 1, which writes nothing.

Children are forked from a ``multiprocessing`` forkserver that imported torch and treadle once
(a fresh interpreter each time costs seconds on a loaded machine); each child runs
``treadle.runner.cli.main(['train', CONFIG, ..., '--resume'])``, the code behind
``treadle train``. ``benchmarks/fault_kill_loop.py`` runs the same with real ``python -m
treadle.runner`` processes too.

After every kill the harness checks that ``last_checkpoint`` names an existing file, finds
the newest complete checkpoint itself (every ``*.pth`` that loads, by its ``meta['iter']``),
and checks that the next run says it resumed from exactly that iteration.

Example:
    >>> job = KillJob(work_dir, variant='epoch')
    >>> reference = job.run_uninterrupted(other_dir)
    >>> report = job.run_with_kills(plan(seed=0, kills=10))
    >>> assert_same_weights(job.final_weights(), reference)
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import re
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "examples" / "digits" / "config.py"
POINTS = ("mid_write", "before_rename", "before_pointer", "mid_pointer", "after_remove")
S3_POINTS = ("mid_upload", "before_pointer", "mid_pointer", "after_remove")

# The main job shortened: 5 epochs of 9 batches (val_fraction takes 287 training images),
# keeping its checkpoints (every epoch, max_keep_ckpts=2, the best by accuracy).
EPOCH_OPTIONS = [
    "train_cfg.max_epochs=5",
    "train_dataloader.dataset.val_fraction=0.8",
    "val_dataloader.dataset.val_fraction=0.1",
    "param_scheduler.0.end=10",
    "param_scheduler.1.end=5",
    "param_scheduler.1.T_max=4",
    "custom_hooks=[]",
    "default_hooks.logger.interval=5",
]

# The iteration-based variant: 48 iterations, a checkpoint every 4 (max_keep_ckpts=1, the
# setting where deleting the old checkpoint first would leave none), validation every 16.
ITER_CONFIG = f"""
_base_ = [{str(CONFIG)!r}]
train_dataloader = dict(
    sampler=dict(_delete_=True, type="InfiniteSampler", shuffle=True),
    dataset=dict(val_fraction=0.8),
)
val_dataloader = dict(dataset=dict(val_fraction=0.1))
train_cfg = dict(_delete_=True, type="IterBasedTrainLoop", max_iters=48, val_interval=16)
param_scheduler = [dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=20)]
default_hooks = dict(
    logger=dict(interval=8),
    checkpoint=dict(by_epoch=False, interval=4, max_keep_ckpts=1),
)
log_processor = dict(by_epoch=False)
custom_hooks = []
"""

# What a child would otherwise import each time (torch._dynamo: the optimizers' first
# construction; treadle.visual: matplotlib).
PRELOAD = [
    "torch",
    "torch._dynamo",
    "treadle.runner.cli",
    "treadle.runner.runner",
    "treadle.visual",
    "sklearn.datasets",
    "boto3",
]
_RESUMED = re.compile(r"resumed epoch: (\d+), iter: (\d+)")


# ------------------------------------------------------------------ in the child


def _kill_self() -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def _install(point: str, nth: int) -> None:
    """Make this process kill itself the ``nth`` time it reaches ``point``."""
    from treadle.fileio import atomic
    from treadle.runner.checkpoint import formats
    from treadle.runner.hooks import checkpoint_hook

    seen = [0]

    def reached() -> bool:
        seen[0] += 1
        return seen[0] == nth

    if point == "mid_write":
        save_torch = formats.save_torch

        def partial_save(checkpoint: Any, file: Any) -> None:
            if isinstance(file, str) and reached():
                import io

                buffer = io.BytesIO()
                save_torch(checkpoint, buffer)
                data = buffer.getvalue()
                with open(file, "wb") as out:
                    out.write(data[: random.randrange(1, len(data))])
                _kill_self()
            save_torch(checkpoint, file)

        formats.save_torch = partial_save
    elif point in ("before_rename", "mid_pointer"):
        put_in_place = atomic._put_in_place
        pointer = point == "mid_pointer"

        def killing_put(temporary: str, path: str, fsync: bool) -> None:
            if path.endswith("last_checkpoint") == pointer and reached():
                _kill_self()
            put_in_place(temporary, path, fsync)

        atomic._put_in_place = killing_put
        if pointer:
            _kill_in_s3_put(lambda path: path.endswith("last_checkpoint") and reached())
    elif point == "before_pointer":
        write_pointers = checkpoint_hook.CheckpointHook._write_pointers

        def killing_pointers(self: Any, runner: Any) -> None:
            if reached():
                _kill_self()
            write_pointers(self, runner)

        checkpoint_hook.CheckpointHook._write_pointers = killing_pointers
    elif point == "after_remove":
        remove = checkpoint_hook.remove_checkpoint

        def killing_remove(path: str, backend: Any) -> bool:
            removed = remove(path, backend)
            if removed and reached():
                _kill_self()
            return removed

        checkpoint_hook.remove_checkpoint = killing_remove
    elif point == "in_save":
        from treadle.runner.runner import checkpointing

        save = checkpointing.save_runner_checkpoint

        def killing_save(*args: Any, **kwargs: Any) -> None:
            if reached():
                _kill_self()
            save(*args, **kwargs)

        checkpointing.save_runner_checkpoint = killing_save
    elif point == "mid_upload":
        _kill_in_s3_put(lambda path: path.endswith(".pth") and reached())
    else:
        raise ValueError(f"unknown kill point {point!r}; the points are {POINTS + S3_POINTS}")


def _kill_in_s3_put(when: Any) -> None:
    """Uploads to S3 for which ``when(path)`` is true send half their body to the server and
    the process dies: the server sees a connection closed mid-request."""
    from treadle.fileio.backends import s3_backend

    put = s3_backend.S3Backend.put

    def killing_put(self: Any, obj: bytes, filepath: Any) -> None:
        path = os.fspath(filepath)
        if when(path):
            _send_half(path, obj)
            _kill_self()
        put(self, obj, filepath)

    s3_backend.S3Backend.put = killing_put


def _send_half(path: str, data: bytes) -> None:
    import http.client
    from urllib.parse import urlparse

    endpoint = urlparse(os.environ["AWS_ENDPOINT_URL"])
    bucket, key = path[len("s3://") :].split("/", 1)
    connection = http.client.HTTPConnection(endpoint.hostname, endpoint.port, timeout=5)
    connection.putrequest("PUT", f"/{bucket}/{key}")
    connection.putheader("Content-Length", str(len(data)))
    connection.endheaders()
    connection.send(data[: max(1, len(data) // 2)])


def _child(argv: list[str], log_path: str, env: dict[str, str], fault: tuple | None) -> None:
    os.environ.update(env)
    descriptor = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(descriptor, 1)
    os.dup2(descriptor, 2)
    import torch

    torch.set_num_threads(1)
    # The iteration variant's config lives in a temporary folder and imports digits_example,
    # which `treadle` finds beside the README's config only.
    sys.path.insert(0, str(CONFIG.parent))
    if fault is not None:
        _install(*fault)
    from treadle.runner.cli import main

    code = 1
    try:
        code = main(argv)
    except SystemExit as stop:  # TrainingPreempted among them: its status is the point
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


# ------------------------------------------------------------------ in the harness


def context() -> Any:
    """The forkserver context whose server imported torch and treadle once."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def _started(ctx: Any, args: tuple) -> Any:
    """A started child running ``_child(*args)``. The forkserver is started again when it
    died (multiprocessing restarts a dead one on the next start), once or twice."""
    for attempt in range(3):
        process = ctx.Process(target=_child, args=args, daemon=True)
        try:
            process.start()
            return process
        except (EOFError, ConnectionError):
            if attempt == 2:
                raise
            time.sleep(0.5)
    raise AssertionError("unreachable")


class _Subprocess:
    """A child as a fresh ``python`` process (what ``treadle train`` is), with the part of
    multiprocessing.Process the harness uses."""

    def __init__(self, target: Any, args: tuple, daemon: bool = True) -> None:
        self.args = args
        self._popen: Any = None

    def start(self) -> None:
        import json
        import subprocess

        self._popen = subprocess.Popen([sys.executable, __file__, json.dumps(self.args)])

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def exitcode(self) -> int | None:
        return self._popen.poll()

    def join(self, timeout: float | None = None) -> None:
        import subprocess

        with contextlib.suppress(subprocess.TimeoutExpired):
            self._popen.wait(timeout)

    def kill(self) -> None:
        self._popen.kill()


class SubprocessContext:
    """Children started as real processes (``python fault_kill.py ARGS``): slower than the
    forkserver's, for the benchmark's longer mode."""

    Process = _Subprocess


def plan(seed: int, kills: int, points: tuple[str, ...] = POINTS, timer: float = 2.5) -> list:
    """``kills`` kills: two in three at a point of checkpoint writing (each point in turn, at
    its first or second occurrence in the run), the rest at a random moment up to ``timer``
    seconds after the start."""
    rng = random.Random(seed)
    steps: list[tuple] = []
    at_points = 0
    for index in range(kills):
        if index % 3 == 2:
            steps.append(("timer", round(rng.uniform(0.2, timer), 3)))
        else:
            steps.append(("at", points[at_points % len(points)], rng.randint(1, 2)))
            at_points += 1
    return steps


@dataclass
class Attempt:
    kill: tuple | None
    exitcode: int | None
    seconds: float
    resumed_iter: int | None
    expected_iter: int | None


@dataclass
class KillReport:
    attempts: list[Attempt] = field(default_factory=list)
    completed: int = 0

    @property
    def kills(self) -> int:
        return sum(a.exitcode == -signal.SIGKILL for a in self.attempts)

    @property
    def runs(self) -> int:
        return len(self.attempts)


class KillJob:
    """One training job in ``work_dir`` (checkpoints there, or under ``out_dir``)."""

    def __init__(
        self,
        work_dir: Path,
        variant: str = "epoch",
        out_dir: str | None = None,
        env: dict[str, str] | None = None,
        ctx: Any = None,
        options: list[str] | None = None,
    ) -> None:
        self.options = list(options or [])
        self.work_dir = Path(work_dir)
        self.variant = variant
        self.out_dir = out_dir
        self.env = dict(env or {})
        self.ctx = ctx or context()
        self.work_dir.mkdir(parents=True, exist_ok=True)

    # -- the command

    def argv(self, work_dir: Path) -> list[str]:
        if self.variant == "epoch":
            config, options = str(CONFIG), list(EPOCH_OPTIONS)
        else:
            config = str(work_dir.parent / f"{work_dir.name}_iter_config.py")
            Path(config).write_text(ITER_CONFIG)
            options = []
        if self.out_dir is not None:
            options.append(f"default_hooks.checkpoint.out_dir={self.out_dir}")
        options += self.options
        argv = ["train", config, "--work-dir", str(work_dir), "--no-progress", "--resume"]
        return argv + (["--cfg-options", *options] if options else [])

    def start(self, work_dir: Path, fault: tuple | None, log_name: str) -> Any:
        log = work_dir / log_name
        return _started(self.ctx, (self.argv(work_dir), str(log), self.env, fault))

    # -- runs

    def run_uninterrupted(self, work_dir: Path, timeout: float = 300) -> dict:
        """Train in ``work_dir`` without kills; the final weights."""
        work_dir.mkdir(parents=True, exist_ok=True)
        process = self.start(work_dir, None, "uninterrupted.log")
        process.join(timeout)
        if process.exitcode != 0:
            process.kill()
            raise AssertionError(
                f"the uninterrupted run failed ({process.exitcode}):\n"
                + (work_dir / "uninterrupted.log").read_text()[-3000:]
            )
        return self.final_weights(work_dir, self._out(work_dir))

    def _out(self, work_dir: Path) -> str:
        if self.out_dir is None:
            return str(work_dir)
        return f"{self.out_dir.rstrip('/')}/{work_dir.name}"

    def run_with_kills(
        self,
        kills: list[tuple],
        reference: dict,
        deadline: float,
        target: int | None = None,
        timeout: float = 120,
    ) -> KillReport:
        """Run the job, killing it as ``kills`` says (one kill a run; a kill at a point the
        run does not reach leaves it to complete), with ``--resume`` each time, until it
        completes; check its final weights against ``reference``, and start it again in a
        fresh folder while kills are left, fewer than ``target`` kills happened and
        time.monotonic() < ``deadline``."""
        report = KillReport()
        pending = list(kills)
        base = self.work_dir
        for round_number in range(1000):
            self.work_dir = base / f"round_{round_number}"
            self.work_dir.mkdir(parents=True)
            self._run_to_completion(pending, deadline, target, timeout, report)
            assert_same_weights(self.final_weights(), reference)
            report.completed += 1
            enough = target is not None and report.kills >= target
            if enough or not pending or time.monotonic() >= deadline:
                return report
        raise AssertionError("unreachable")

    def _run_to_completion(
        self,
        pending: list[tuple],
        deadline: float,
        target: int | None,
        timeout: float,
        report: KillReport,
    ) -> None:
        for number in range(500):
            more = pending and time.monotonic() < deadline
            more = more and (target is None or report.kills < target)
            kill = pending.pop(0) if more else None
            expected = self.newest_complete_iter()
            log = f"attempt_{number:03d}.log"
            started = time.monotonic()
            fault = kill[1:] if kill and kill[0] == "at" else None
            process = self.start(self.work_dir, fault, log)
            if kill and kill[0] == "timer":
                process.join(kill[1])
                if process.exitcode is None:
                    os.kill(process.pid, signal.SIGKILL)
            process.join(timeout)
            if process.exitcode is None:
                process.kill()
                process.join()
                raise AssertionError(f"{self.work_dir}/{log}: the run hung:\n" + self._tail(log))
            text = (self.work_dir / log).read_text()
            match = _RESUMED.search(text)
            attempt = Attempt(
                kill, process.exitcode, time.monotonic() - started,
                int(match.group(2)) if match else None, expected,
            )  # fmt: skip
            report.attempts.append(attempt)
            self.check_attempt(attempt, log)
            if process.exitcode == 0:
                return
            if process.exitcode != -signal.SIGKILL:
                raise AssertionError(
                    f"{self.work_dir}/{log}: the run failed ({process.exitcode}):\n"
                    + self._tail(log)
                )
        raise AssertionError(f"{self.work_dir}: the job did not complete in 500 runs")

    def _tail(self, log: str) -> str:
        return (self.work_dir / log).read_text()[-4000:]

    # -- checks

    def check_attempt(self, attempt: Attempt, log: str) -> None:
        """The run resumed from the newest complete checkpoint, and the pointer it left names
        a file that exists."""
        # A run killed before it logged where it resumed from says nothing to check.
        silent = attempt.exitcode == -signal.SIGKILL and attempt.resumed_iter is None
        wrong = attempt.resumed_iter != attempt.expected_iter
        if attempt.expected_iter is not None and wrong and not silent:
            raise AssertionError(
                f"expected a resume from iteration {attempt.expected_iter}, the run said "
                f"{attempt.resumed_iter}:\n" + self._tail(log)
            )
        self.check_pointer()

    def check_pointer(self) -> None:
        from treadle import fileio
        from treadle.runner.checkpoint.pointer import read_pointer

        for directory in {str(self.work_dir), self._out(self.work_dir)}:
            # The pointer names its checkpoint relative to its own folder (or by full path).
            named = read_pointer(directory)
            if named is not None and not fileio.exists(named):
                pointer = fileio.join_path(directory, "last_checkpoint")
                raise AssertionError(f"{pointer} names {named}, which does not exist")

    def checkpoints(self, out: str | None = None) -> dict[str, dict | None]:
        """Every resumable ``*.pth`` of the job: its loaded dict, or None if it does not load."""
        import io

        import torch

        from treadle import fileio

        out = out or self._out(self.work_dir)
        found: dict[str, dict | None] = {}
        try:
            names = list(fileio.list_dir_or_file(out, list_dir=False, suffix=".pth"))
        except FileNotFoundError:  # nothing saved yet (an S3 prefix exists once it holds one)
            names = []
        for name in names:
            if name.startswith(("best_", ".")):
                continue
            path = fileio.join_path(out, name)
            try:
                data = fileio.get(path)
                found[path] = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
            except Exception:
                found[path] = None
        return found

    def newest_complete_iter(self) -> int | None:
        """The iteration of the newest checkpoint that loads (None: none does)."""
        iters = [c["meta"]["iter"] for c in self.checkpoints().values() if c is not None]
        return max(iters, default=None)

    def final_weights(self, work_dir: Path | None = None, out: str | None = None) -> dict:
        checkpoints = self.checkpoints(out or self._out(work_dir or self.work_dir))
        complete = [c for c in checkpoints.values() if c is not None]
        return max(complete, key=lambda c: c["meta"]["iter"])["state_dict"]


def assert_same_weights(got: dict, expected: dict) -> None:
    """Bit for bit: the same names, and every tensor equal."""
    import torch

    assert sorted(got) == sorted(expected)
    for name, tensor in expected.items():
        if not torch.equal(got[name], tensor):
            raise AssertionError(f"{name} differs from the uninterrupted run")


# ------------------------------------------------------------------ two processes (DDP)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class DDPKillJob(KillJob):
    """The job as a 2-process DDP run on gloo (``--launcher pytorch``); a kill takes down one
    rank (rank 1), and the harness ends the other rank when it does not stop by itself (gloo
    fails its next collective, or it waits for the group's timeout)."""

    world_size = 2

    def argv(self, work_dir: Path) -> list[str]:
        return [*super().argv(work_dir), "--launcher", "pytorch"]

    def start_group(self, work_dir: Path, fault: tuple | None, log_name: str) -> list[Any]:
        port = _free_port()
        processes = []
        for rank in range(self.world_size):
            env = dict(self.env)
            env.update(
                RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(self.world_size),
                LOCAL_WORLD_SIZE=str(self.world_size), MASTER_ADDR="127.0.0.1",
                MASTER_PORT=str(port),
            )  # fmt: skip
            log = work_dir / f"{log_name}.rank{rank}"
            args = (self.argv(work_dir), str(log), env, fault if rank == 1 else None)
            processes.append(_started(self.ctx, args))
        return processes

    @staticmethod
    def _end(processes: list[Any], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in processes:
            if process.exitcode is None:
                os.kill(process.pid, signal.SIGKILL)
                process.join()

    def run_uninterrupted(self, work_dir: Path, timeout: float = 300) -> dict:
        work_dir.mkdir(parents=True, exist_ok=True)
        processes = self.start_group(work_dir, None, "uninterrupted.log")
        self._end(processes, timeout)
        codes = [p.exitcode for p in processes]
        if codes != [0] * self.world_size:
            logs = (work_dir / "uninterrupted.log.rank0").read_text()[-3000:]
            raise AssertionError(f"the uninterrupted DDP run failed {codes}:\n{logs}")
        return self.final_weights(work_dir, self._out(work_dir))

    def run_ddp_with_kills(
        self, kills: list[tuple], reference: dict, timeout: float = 60
    ) -> KillReport:
        """Each kill takes down rank 1 (``("timer", s)`` or ``("at", point, n)``); then the
        group runs again with ``--resume``; at the end the weights must be ``reference``."""
        report = KillReport()
        self.work_dir.mkdir(parents=True, exist_ok=True)
        for number in range(len(kills) + 20):
            kill = kills[number] if number < len(kills) else None
            expected = self.newest_complete_iter()
            log = f"attempt_{number:03d}.log"
            started = time.monotonic()
            fault = kill[1:] if kill and kill[0] == "at" else None
            processes = self.start_group(self.work_dir, fault, log)
            if kill and kill[0] == "timer":
                processes[1].join(kill[1])
                if processes[1].exitcode is None:
                    os.kill(processes[1].pid, signal.SIGKILL)
            # A rank whose peer died stops at its next collective (gloo's connection closes).
            self._end(processes, timeout)
            text = (self.work_dir / f"{log}.rank0").read_text()
            match = _RESUMED.search(text)
            codes = [p.exitcode for p in processes]
            attempt = Attempt(
                kill, codes[1], time.monotonic() - started,
                int(match.group(2)) if match else None, expected,
            )  # fmt: skip
            report.attempts.append(attempt)
            self.check_attempt(attempt, f"{log}.rank0")
            if codes == [0, 0]:
                assert_same_weights(self.final_weights(), reference)
                report.completed += 1
                return report
            if codes[1] != -signal.SIGKILL:
                raise AssertionError(
                    f"{self.work_dir}/{log}: rank 1 ended with {codes[1]} without a kill:\n"
                    + (self.work_dir / f"{log}.rank1").read_text()[-3000:]
                )
        raise AssertionError(f"{self.work_dir}: the DDP job did not complete")


if __name__ == "__main__":
    import json

    _argv, _log, _env, _fault = json.loads(sys.argv[1])
    _child(_argv, _log, _env, tuple(_fault) if _fault else None)
