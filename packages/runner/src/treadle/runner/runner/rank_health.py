"""No rank left hanging: heartbeats in the c10d store, a watcher that stops this rank when
another one is gone, and a clear error when a collective fails.

While ``Runner.train`` runs with several processes, each rank has one daemon thread that every
second writes "alive, at iteration i" into the process group's store (reading the loop's
counters, which the loop updates anyway: the training step itself pays nothing) and watches:

- the next rank (rank r watches r + 1, so the store serves a few requests per rank per
  second whatever the world size): on this host its process is looked up directly, so a
  SIGKILLed rank is noticed within a second or two; on another host, after
  ``SILENCE_S`` without a heartbeat;
- the run's abort flag, which a rank sets when it stops the run; and the failure counter,
  which a rank raises when it fails alone (a rank still training ``FAILED_GRACE_S`` later
  would wait for it forever in its next collective);
- the store itself: when it stops answering, rank 0 (or torchrun's agent), which hosts it,
  is gone.

On any of these, while this rank's main thread is not already reporting a failure, it logs
an error naming the rank and exits with status 1 (``os._exit``: the main thread may be blocked
in a collective that would otherwise wait for ``env_cfg.dist_cfg.timeout``).

When a collective fails in the main thread (a gloo connection error, a timeout),
:func:`.rank_watch.watch_ranks` turns the failure into a
:class:`.rank_failure.RankFailureError` naming the collective, the iteration and the ranks
that died or did not arrive, and tells the other ranks to stop.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from treadle.logging import print_log

from .rank_failure import PeerState, blame, collective_of, failure_message

KEY = "treadle/health/"
BEAT_S = 1.0
# A peer on another host is dead after this long without a heartbeat: its process cannot be
# looked up from here, and a rank busy in code that holds the GIL must not be taken for dead.
SILENCE_S = 60.0
# How long a rank may go on training after another one raised an error on its own.
FAILED_GRACE_S = 5.0
# How long the store may not answer before its host is taken for gone.
STORE_LOST_S = 3.0
# How long a rank that stops the run waits for the others to read why (it may host the store).
ACK_WAIT_S = 3.0
# How long the failure report may spend reading heartbeats.
DIAGNOSE_S = 10.0
EXIT_STATUS = 1

Position = Callable[[], "tuple[str, tuple[int, int]]"]


def _identity() -> str:
    """Host, PID namespace and PID: two ranks with the same host and namespace can look up
    each other's process."""
    try:
        namespace = os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        namespace = 0
    return f"{socket.gethostname()}\t{namespace}\t{os.getpid()}"


def _process_gone(pid: int) -> bool:
    """Whether process ``pid`` of this host has ended (a zombie counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
        return state in ("Z", "X")
    except FileNotFoundError:
        return True
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:
            return False
        return False


def default_store() -> Any:
    """The default process group's c10d store, or None where torch gives none."""
    from torch.distributed import distributed_c10d

    getter = getattr(distributed_c10d, "_get_default_store", None)
    try:
        return getter() if getter is not None else None
    except (RuntimeError, ValueError):
        return None


class RankHealth:
    """One rank's heartbeat and watcher (see the module's docstring).

    ``position()`` returns where this rank is, as words and as an orderable progress; it is
    read once a second by the heartbeat thread.

    Example:
        >>> health = RankHealth(default_store(), rank, world_size, position, logger)
        >>> health.start()
        >>> ...  # train
        >>> health.stop()
    """

    def __init__(
        self,
        store: Any,
        rank: int,
        world_size: int,
        position: Position,
        logger: Any = None,
        run: int = 0,
    ) -> None:
        self.store = store
        # One set of keys per run (``run``: the how-manieth train() of this process, the same
        # on every rank): what an earlier run of the same group left in the store, a failure
        # the ranks stopped together on, must not stop this one.
        self.prefix = f"{KEY}{run}/"
        self.rank = rank
        self.world_size = world_size
        self.position = position
        self.logger = logger
        # Set once the main thread reports a failure: the watcher then leaves it to it.
        self.reporting = False
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None
        self._beats = 0
        self._identity = _identity()
        self._last_beat: dict[int, tuple[str, float]] = {}
        self._who: dict[int, str] = {}
        self._store_failing_since: float | None = None
        self._failures_seen_at: float | None = None
        self._failed = False
        self._store_gone = False

    # -- the store ----------------------------------------------------------------------

    def _get(self, name: str) -> str | None:
        key = self.prefix + name
        if not self.store.check([key]):
            return None
        return self.store.get(key).decode()

    def _beat(self) -> None:
        where, progress = self.position()
        self._beats += 1
        value = f"{self._beats}\t{progress[0]}\t{progress[1]}\t{where}"
        self.store.set(f"{self.prefix}beat/{self.rank}", value)

    def start(self) -> None:
        """Publish this rank's identity and first heartbeat, and start the thread."""
        self.store.set(f"{self.prefix}who/{self.rank}", self._identity)
        self._beat()
        self._thread = threading.Thread(target=self._run, name="treadle-rank-health", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread; a rank that did not fail says it ended its run."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=2 * BEAT_S)
        if not self._failed:
            with contextlib.suppress(Exception):
                self.store.set(f"{self.prefix}left/{self.rank}", "1")

    # -- peers --------------------------------------------------------------------------

    def peer(self, rank: int, silence_s: float = SILENCE_S) -> PeerState:
        """What ``rank`` last said, and whether it is still there."""
        failed = self._get(f"failed/{rank}")
        beat = self._get(f"beat/{rank}")
        where, progress, seq = "before its first heartbeat", (-1, -1), ""
        if beat is not None:
            seq, iteration, phase, where = beat.split("\t", 3)
            progress = (int(iteration), int(phase))
        if failed is not None:
            return PeerState(rank, "failed", where, progress, failed)
        if self._get(f"left/{rank}") is not None:
            return PeerState(rank, "left", where, progress)
        if beat is None:
            return PeerState(rank, "unknown", where, progress)
        pid = self._local_pid(rank)
        if pid is not None:
            if _process_gone(pid):
                detail = f"its process {pid} on this host is gone"
                return PeerState(rank, "dead", where, progress, detail)
            return PeerState(rank, "alive", where, progress)
        now = time.monotonic()
        last_seq, since = self._last_beat.get(rank, ("", now))
        if seq != last_seq:
            self._last_beat[rank] = (seq, now)
            since = now
        if now - since >= silence_s:
            return PeerState(rank, "silent", where, progress, f"{now - since:.0f} s ago")
        return PeerState(rank, "alive", where, progress)

    def _local_pid(self, rank: int) -> int | None:
        """The PID of ``rank`` when it runs on this host (in this PID namespace), else None."""
        who = self._who.get(rank) or self._get(f"who/{rank}") or ""
        self._who[rank] = who  # it never changes: read once
        host, namespace, pid = [*who.split("\t"), "", "", ""][:3]
        same = [host, namespace] == self._identity.split("\t")[:2]
        return int(pid) if same and pid.isdigit() else None

    def peers(self, silence_s: float = 2.5 * BEAT_S) -> list[PeerState]:
        """Every other rank's state; ranks on other hosts are watched for ``silence_s``."""
        others = [rank for rank in range(self.world_size) if rank != self.rank]
        states = {rank: self.peer(rank, silence_s) for rank in others}
        # A rank of this host is alive or not for certain; one of another host is alive until
        # its heartbeat stops for silence_s.
        remote = [rank for rank in others if self._local_pid(rank) is None]
        deadline = time.monotonic() + silence_s
        while any(states[rank].status == "alive" for rank in remote):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.25)
            for rank in remote:
                if states[rank].status == "alive":
                    states[rank] = self.peer(rank, silence_s)
        return [states[rank] for rank in others]

    # -- failures -----------------------------------------------------------------------

    def publish_failure(self, message: str, abort: bool) -> None:
        """Tell the other ranks this one failed (and, with ``abort``, that the run is over:
        they stop at once); waits a moment for them to read it."""
        self.reporting = True
        self._failed = True
        if self._store_gone:
            return
        with contextlib.suppress(Exception):
            self.store.set(f"{self.prefix}failed/{self.rank}", message)
            self.store.add(f"{self.prefix}failures", 1)
            if abort:
                self.store.set(f"{self.prefix}abort", f"{self.rank}\t{message}")
                self._wait_for_acks()

    def _wait_for_acks(self) -> None:
        deadline = time.monotonic() + ACK_WAIT_S
        while time.monotonic() < deadline:
            waiting = [
                rank
                for rank in range(self.world_size)
                if rank != self.rank
                and self._get(f"ack/{rank}") is None
                and self.peer(rank).status in ("alive", "unknown")
            ]
            if not waiting:
                return
            time.sleep(0.2)

    def diagnose(self, error: BaseException, model: Any = None) -> str:
        """The message of the failed collective ``error`` (read within ``DIAGNOSE_S``, in a
        thread: a store whose host died must not hang the report)."""
        where, progress = self.position()
        collective = collective_of(error, model)
        timeout = _group_timeout(self.store)
        found: list[PeerState] = []

        def read() -> None:
            found.extend(self.peers())

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(DIAGNOSE_S)
        if reader.is_alive() or len(found) != self.world_size - 1:
            self._store_gone = True
            host = _store_host(self.store)
            return (
                f"rank {self.rank}: {collective} {where} failed, and the store that holds the "
                f"ranks' heartbeats does not answer: {host}, which hosts it, is gone. "
                f"The backend said: {str(error).strip()[:300]}"
            )
        return failure_message(
            error,
            rank=self.rank,
            collective=collective,
            where=where,
            progress=progress,
            peers=found,
            timeout=timeout,
        )

    # -- the watcher --------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stopped.wait(BEAT_S):
            try:
                self._beat()
                reason = self._check()
                self._store_failing_since = None
            except Exception as error:  # the store does not answer
                now = time.monotonic()
                self._store_failing_since = self._store_failing_since or now
                if now - self._store_failing_since < STORE_LOST_S:
                    continue
                reason = (
                    f"the store that holds the ranks' heartbeats does not answer "
                    f"({type(error).__name__}): {_store_host(self.store)}, which hosts it, is gone"
                )
            if reason is not None and not self.reporting and not self._stopped.is_set():
                self._exit(reason)

    def _check(self) -> str | None:
        """Why this rank must stop now, or None."""
        abort = self._get("abort")
        if abort is not None:
            origin, message = abort.split("\t", 1)
            if int(origin) != self.rank:
                self.store.set(f"{self.prefix}ack/{self.rank}", "1")
                return f"rank {origin} stopped the run: {message}"
        neighbour = (self.rank + 1) % self.world_size
        state = self.peer(neighbour)
        if state.status in ("dead", "silent"):
            # The main thread may be about to report the same from a collective's error.
            self._stopped.wait(BEAT_S)
            where, progress = self.position()
            message = (
                f"{blame(state, progress)}; rank {self.rank} stops {where}, since its next "
                f"collective would wait for it"
            )
            if not self.reporting:
                with contextlib.suppress(Exception):
                    self.store.set(f"{self.prefix}abort", f"{self.rank}\t{message}")
                    # This rank may host the store: the others read why before it exits.
                    self._wait_for_acks()
            return message
        return self._failed_peers()

    def _failed_peers(self) -> str | None:
        failures = int(self.store.add(f"{self.prefix}failures", 0))
        if failures == 0:
            return None
        now = time.monotonic()
        self._failures_seen_at = self._failures_seen_at or now
        if now - self._failures_seen_at < FAILED_GRACE_S:
            return None
        failed = [
            (rank, self._get(f"failed/{rank}"))
            for rank in range(self.world_size)
            if rank != self.rank
        ]
        named = [f"rank {rank} stopped with {message}" for rank, message in failed if message]
        if not named:
            return None
        where, _ = self.position()
        return f"{'; '.join(named)}; rank {self.rank} was still training {where}"

    def _exit(self, reason: str) -> None:
        message = f"rank {self.rank}: {reason}. Exiting (status {EXIT_STATUS})."
        print_log(message, logger=self.logger or "current", level=logging.ERROR)
        for handler in _handlers(self.logger):
            with contextlib.suppress(Exception):
                handler.flush()
        os._exit(EXIT_STATUS)


def _handlers(logger: Any) -> list[logging.Handler]:
    handlers = list(getattr(logger, "handlers", []))
    return handlers + list(logging.getLogger().handlers)


def _store_host(store: Any) -> str:
    """Who hosts ``store``: torchrun's agent when it is the agent's, else rank 0."""
    inner = store
    while getattr(inner, "underlying_store", None) is not None:
        inner = inner.underlying_store
    host, port = getattr(inner, "host", None), getattr(inner, "port", None)
    address = f" (at {host}:{port})" if host else ""
    agent = os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True"
    if agent and (port is None or str(port) == os.environ.get("MASTER_PORT")):
        return f"torchrun's agent{address}"
    return f"rank 0{address}"


def _group_timeout(store: Any) -> timedelta | None:
    """The default group's collective timeout (env_cfg.dist_cfg.timeout), else the store's."""
    try:
        import torch
        from torch.distributed import distributed_c10d

        backend = distributed_c10d._get_default_group()._get_backend(torch.device("cpu"))
        timeout = backend.options._timeout
    except Exception:  # no CPU backend (NCCL only), or torch's internals moved
        timeout = getattr(store, "timeout", None)
    return timeout if isinstance(timeout, timedelta) else None
