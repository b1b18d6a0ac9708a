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
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from treadle import fileio
from treadle.dist import is_main_process
from treadle.logging import print_log
from treadle.runner.checkpoint.pointer import write_pointer

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

    def remove(self) -> None:
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        self._disarm()

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.received is not None:
            return  # already stopping
        self.received = signal.Signals(signum)
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
        runner = self.runner
        name = self.received.name if self.received is not None else "signal"
        out_dir = _checkpoint_dir(runner)
        path = fileio.join_path(out_dir, FILENAME)
        runner.logger.warning(
            f"{name} received: saving {path} after iteration {runner.iter} and stopping"
        )
        # Recorded in the checkpoint as CheckpointHook records its own: a resumed run knows
        # which file it continues.
        runner.message_hub.update_info("last_ckpt", path)
        runner.save_checkpoint(
            out_dir, FILENAME, meta=dict(epoch=runner.epoch, iter=runner.iter), by_epoch=False
        )
        runner.strategy.wait_for_checkpoint()
        if is_main_process():
            _write_pointers(runner, out_dir, path)
            slurm_signal = self.received in self.settings["slurm_signals"]
            if slurm_signal and _under_slurm() and self.settings["requeue"]:
                _requeue(runner)
        raise TrainingPreempted(self.settings["exit_code"], name, path)


def _checkpoint_dir(runner: Any) -> str:
    from treadle.runner.hooks.checkpoint_hook import CheckpointHook

    for hook in getattr(runner, "hooks", []):
        if isinstance(hook, CheckpointHook) and getattr(hook, "out_dir", None):
            return hook.out_dir
    return os.fspath(runner.work_dir)


def _write_pointers(runner: Any, out_dir: str, path: str) -> None:
    work_dir = os.fspath(runner.work_dir)
    write_pointer(work_dir, path)
    if out_dir != work_dir:
        write_pointer(out_dir, path)


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
        armed = preemption._armed is not None
        preemption.remove()
        if armed:
            print_log(
                f"{preemption.received.name} received after the last training iteration: "
                "training finished",
                logger="current",
            )
