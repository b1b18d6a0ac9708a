"""Preemption: a signal asks the run to stop; it finishes the current iteration, saves a
checkpoint it can resume from exactly, and exits with a status that says so.

Schedulers and clusters warn a job before they stop it: SIGTERM (Kubernetes, ``scancel``,
SLURM at the time limit), or the signal of SLURM's ``--signal=USR1@90``. ``Runner.train``
installs the handlers for the run (the config's ``preemption`` dict sets them) and takes them
away when it returns. On the signal the handler only sets a flag and arms the train loop: the
loop's step methods are wrapped on the instance, so the per-step path costs nothing until a
signal comes. After the iteration in progress, the runner writes ``preempted.pth`` where
CheckpointHook writes (its ``out_dir``, else ``work_dir``), moves ``last_checkpoint`` to it,
under SLURM asks for the job to be requeued (``scontrol requeue $SLURM_JOB_ID``) when the
signal was one of ``slurm_signals``, and raises :class:`TrainingPreempted`, a SystemExit whose
status is ``exit_code`` (75, EX_TEMPFAIL of sysexits.h: "try again later"). ``treadle train
... --resume`` continues the run.

A signal that comes during validation or a checkpoint write is acted on at the end of the
next training iteration; one that comes after the last iteration lets training finish.

With several processes a scheduler may signal some ranks only, and a rank that stopped alone
would leave the others waiting in their next collective. So a signalled rank only notes the
signal; the ranks tell each other at the next point where they already agree on the losses
(the loss watch's check, every ``nonfinite_check_interval`` iterations and before a checkpoint,
validation and an epoch's end; or every step with ``nonfinite_loss='skip'``, see
:mod:`treadle.runner.loops.rank_agreement`), which costs no step anything while no signal
came. Then every rank arms, finishes the same iteration, takes part in one normal distributed
save of ``preempted.pth`` (rank 0 writes it with DDP), waits for the others and exits with the
same status. Keep ``nonfinite_check_interval`` iterations well within the scheduler's grace
period (SLURM's ``--signal=USR1@90``: 90 s; Kubernetes: 30 s by default): the default of 50
suits iterations of up to about half a second; lower it for slower ones.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from treadle import dist, fileio
from treadle.dist import is_main_process
from treadle.logging import print_log
from treadle.runner.checkpoint.pointer import write_pointer
from treadle.runner.checkpoint.run_store import checkpoint_backend_args

FILENAME = "preempted.pth"
EXIT_CODE = 75
_STEP_METHODS = ("_recorded_step", "_train_step")
_KEYS = ("enable", "signals", "slurm_signals", "requeue", "exit_code")


class TrainingPreempted(SystemExit):
    """Raised by ``Runner.train`` after a preemption signal, once ``checkpoint`` is saved; a
    SystemExit, so a training script exits with ``code`` (75 by default) unless it catches it.

    Example:
        >>> try:
        ...     runner.train()
        ... except TrainingPreempted as stop:
        ...     print(stop.signal_name, stop.checkpoint)  # doctest: +SKIP
        SIGTERM work_dirs/digits/preempted.pth
    """

    def __init__(self, code: int, signal_name: str, checkpoint: str) -> None:
        super().__init__(code)
        self.signal_name = signal_name
        self.checkpoint = checkpoint


def _signal(name: Any, key: str) -> signal.Signals:
    if isinstance(name, int):
        return signal.Signals(name)
    if isinstance(name, str):
        text = name.upper()
        text = text if text.startswith("SIG") else f"SIG{text}"
        if hasattr(signal.Signals, text):
            return signal.Signals[text]
    raise ValueError(
        f"preemption.{key}: {name!r} is not a signal name (write e.g. 'SIGTERM' or 'SIGUSR1')"
    )


def _settings(cfg: Mapping[str, Any] | None) -> dict[str, Any]:
    cfg = dict(cfg or {})
    unknown = sorted(set(cfg) - set(_KEYS))
    if unknown:
        raise KeyError(f"preemption: unknown key(s) {unknown}; the keys are {list(_KEYS)}")
    exit_code = cfg.get("exit_code", EXIT_CODE)
    if not isinstance(exit_code, int) or isinstance(exit_code, bool) or not 0 < exit_code < 256:
        raise ValueError(f"preemption.exit_code must be an int from 1 to 255, got {exit_code!r}")
    return {
        "enable": bool(cfg.get("enable", True)),
        "signals": [_signal(s, "signals") for s in cfg.get("signals", ["SIGTERM"])],
        "slurm_signals": [
            _signal(s, "slurm_signals") for s in cfg.get("slurm_signals", ["SIGUSR1"])
        ],
        "requeue": bool(cfg.get("requeue", True)),
        "exit_code": exit_code,
    }


def _under_slurm() -> bool:
    return "SLURM_JOB_ID" in os.environ


class Preemption:
    """The signal handlers of one ``Runner.train`` call (see the module's docstring).

    Example:
        >>> with preemption_handlers(runner, dict(signals=['SIGTERM'])):
        ...     runner.train_loop.run()  # doctest: +SKIP
    """

    def __init__(self, runner: Any, cfg: Mapping[str, Any] | None = None) -> None:
        self.runner = runner
        self.settings = _settings(cfg)
        self.received: signal.Signals | None = None
        self._previous: dict[signal.Signals, Any] = {}
        self._armed: Any = None
        # With several ranks: {rank: signal} once the ranks agreed that some were signalled.
        self.signalled_ranks: dict[int, int] | None = None
        self.stopped = False

    @property
    def handled(self) -> list[signal.Signals]:
        signals = list(self.settings["signals"])
        if _under_slurm():
            signals += [s for s in self.settings["slurm_signals"] if s not in signals]
        return signals

    def install(self) -> None:
        import threading

        # Python delivers signals to the main thread only; a runner trained in another thread
        # leaves the process's handlers alone.
        if not self.settings["enable"] or threading.current_thread() is not threading.main_thread():
            return
        for signum in self.handled:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        agreement = self._agreement()
        if agreement is not None:
            # Every rank, signalled or not, stops when the ranks agree that one was.
            agreement.on_stop = self._agreed

    def _agreement(self) -> Any:
        """The train loop's RankAgreement (None: a loop without one, or none built yet)."""
        loop = getattr(self.runner, "_train_loop", None)
        return getattr(loop, "rank_agreement", None)

    def remove(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        agreement = self._agreement()
        if agreement is not None and agreement.on_stop == self._agreed:
            agreement.on_stop, agreement.signal = None, 0
        self._disarm()

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.received is not None:
            return  # already stopping
        self.received = signal.Signals(signum)
        agreement = self._agreement()
        if agreement is not None and agreement.active():
            # Stopping alone would hang the other ranks: tell them at the next agreement.
            agreement.signal = int(signum)
            return
        self._arm()

    def _agreed(self, signals: Mapping[int, int]) -> None:
        """The ranks agreed that ``signals`` (``{rank: signal}``) came: stop after the
        iteration in progress, on every rank."""
        if self.signalled_ranks is not None:
            return  # already stopping (the save of preempted.pth checks the losses again)
        self.signalled_ranks = dict(signals)
        if self.received is None:
            self.received = signal.Signals(signals[min(signals)])
        self._arm()

    # -- acting after the iteration in progress

    def _arm(self) -> None:
        loop = getattr(self.runner, "_train_loop", None)
        if loop is None or isinstance(loop, dict):
            return
        self._armed = loop
        for name in _STEP_METHODS:
            original = getattr(loop, name, None)
            if original is None:
                continue

            def after_step(*args: Any, _original: Any = original, **kwargs: Any) -> Any:
                result = _original(*args, **kwargs)
                self._stop()
                return result

            setattr(loop, name, after_step)

    def _disarm(self) -> None:
        loop, self._armed = self._armed, None
        if loop is not None:
            for name in _STEP_METHODS:
                loop.__dict__.pop(name, None)

    def _stop(self) -> None:
        self._disarm()
        self.stopped = True
        runner = self.runner
        name = self.received.name if self.received is not None else "signal"
        out_dir = _checkpoint_dir(runner)
        path = fileio.join_path(out_dir, FILENAME)
        ranks = self.signalled_ranks
        if ranks is None:
            runner.logger.warning(
                f"{name} received: saving {path} after iteration {runner.iter} and stopping"
            )
        else:
            who = ", ".join(
                f"{signal.Signals(s).name} on rank {r}" for r, s in sorted(ranks.items())
            )
            runner.logger.warning(
                f"{name} received ({who}): every rank saves {path} after iteration "
                f"{runner.iter} and stops"
            )
        # Recorded in the checkpoint as CheckpointHook records its own: a resumed run knows
        # which file it continues.
        runner.message_hub.update_info("last_ckpt", path)
        backend_args = checkpoint_backend_args(runner)
        runner.save_checkpoint(
            out_dir,
            FILENAME,
            meta=dict(epoch=runner.epoch, iter=runner.iter),
            by_epoch=False,
            backend_args=backend_args,
        )
        runner.strategy.wait_for_checkpoint()
        if is_main_process():
            _write_pointers(runner, out_dir, path, backend_args)
            slurm_signal = self.received in self.settings["slurm_signals"]
            if slurm_signal and _under_slurm() and self.settings["requeue"]:
                _requeue(runner)
        if dist.get_world_size() > 1:
            # Leave together: a rank that exited first could have the launcher (torchrun) end
            # the others while rank 0 still writes.
            dist.barrier()
        raise TrainingPreempted(self.settings["exit_code"], name, path)


def _checkpoint_dir(runner: Any) -> str:
    from treadle.runner.hooks.checkpoint_hook import CheckpointHook

    for hook in getattr(runner, "hooks", []):
        if isinstance(hook, CheckpointHook) and getattr(hook, "out_dir", None):
            return hook.out_dir
    return os.fspath(runner.work_dir)


def _write_pointers(runner: Any, out_dir: str, path: str, backend_args: dict | None) -> None:
    work_dir = os.fspath(runner.work_dir)
    write_pointer(work_dir, path)
    if out_dir != work_dir:
        backend = fileio.get_file_backend(out_dir, backend_args=backend_args, enable_singleton=True)
        write_pointer(out_dir, path, backend=backend)


def _requeue(runner: Any) -> None:
    job = os.environ["SLURM_JOB_ID"]
    if shutil.which("scontrol") is None:
        runner.logger.error(f"cannot requeue SLURM job {job}: scontrol is not on PATH")
        return
    result = subprocess.run(
        ["scontrol", "requeue", job], capture_output=True, text=True, check=False
    )
    if result.returncode == 0:
        runner.logger.warning(f"requeued SLURM job {job} (scontrol requeue {job})")
    else:
        runner.logger.error(
            f"scontrol requeue {job} failed ({result.returncode}): "
            f"{(result.stderr or result.stdout).strip()}"
        )


@contextmanager
def preemption_handlers(runner: Any, cfg: Mapping[str, Any] | None = None) -> Iterator[Preemption]:
    """Handle the preemption signals while the block runs (see the module's docstring)."""
    preemption = Preemption(runner, cfg)
    preemption.install()
    try:
        yield preemption
    finally:
        # Signalled (or agreed so) and never stopped, and training ended without an error: the
        # signal came after the last training iteration (or after the ranks' last agreement).
        armed = preemption.received is not None and not preemption.stopped
        armed = armed and sys.exc_info()[0] is None
        preemption.remove()
        if armed:
            print_log(
                f"{preemption.received.name} received after the last training iteration: "
                "training finished",
                logger="current",
            )
