"""One toolbox's train, resume and test sequence, run with both engines side by side.

Every downstream test module compares the same sequence: a toolbox's own tools/train.py trains
a config into ``work/``, a second tools/train.py resumes a checkpoint of it into ``resumed/``,
and tools/test.py tests a checkpoint into ``tested/`` (downstream_runs.py runs each command).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from downstream_runs import (
    ENGINES,
    Finished,
    engine_command,
    prepare_folder,
    run,
    timestamp_dirs,
    tools_dir,
)


@dataclass(frozen=True)
class ToolboxRun:
    """What one toolbox's sequence runs: the same for both engines but the tested checkpoint."""

    toolbox: str
    config: str
    #: The checkpoint of ``work/`` the resumed run starts from, e.g. ``work/epoch_2.pth``.
    resume_from: str
    #: Per engine, the checkpoint tools/test.py loads (see ``TESTED_CHECKPOINT``).
    tested: Mapping[str, str]
    test_args: Sequence[str] = ()
    #: mmsegmentation's tools/train.py takes ``--resume`` as a flag (the latest checkpoint of the
    #: work dir): the checkpoint is then named by ``load_from``, which a resume loads.
    resume_by_load_from: bool = False

    def resume_args(self) -> list[str]:
        """tools/train.py's arguments that resume ``resume_from``."""
        if self.resume_by_load_from:
            return ["--resume", "--cfg-options", f"load_from={self.resume_from}"]
        return ["--resume", self.resume_from]


@dataclass
class EngineRuns:
    """One engine's finished sequence and the folder it ran in."""

    engine: str
    folder: Path
    train: Finished
    resume: Finished
    test: Finished

    @property
    def train_dir(self) -> Path:
        (run_dir,) = timestamp_dirs(self.folder / "work")
        return run_dir

    @property
    def resume_dir(self) -> Path:
        (run_dir,) = timestamp_dirs(self.folder / "resumed")
        return run_dir

    @property
    def test_dir(self) -> Path:
        (run_dir,) = timestamp_dirs(self.folder / "tested")
        return run_dir


def run_sequence(engine: str, folder: Path, plan: ToolboxRun) -> EngineRuns:
    """Train, resume and test in ``folder`` with ``engine``; raise on the first failed run."""
    tools = tools_dir(plan.toolbox)
    train, test = tools / "train.py", tools / "test.py"
    trained = run(engine_command(engine, train, plan.config, "--work-dir", "work"), folder).check()
    resumed = run(
        engine_command(
            engine,
            train,
            plan.config,
            "--work-dir",
            "resumed",
            *plan.resume_args(),
        ),
        folder,
    ).check()
    tested = run(
        engine_command(
            engine,
            test,
            plan.config,
            plan.tested[engine],
            "--work-dir",
            "tested",
            *plan.test_args,
        ),
        folder,
    ).check()
    return EngineRuns(engine, folder, trained, resumed, tested)


def run_both(root: Path, data: Path, plan: ToolboxRun) -> dict[str, EngineRuns]:
    """Both engines' sequences under ``root/<engine>``, side by side (each is sequential and
    single-threaded), each folder holding ``data`` and the configs."""
    with ThreadPoolExecutor(max_workers=len(ENGINES)) as pool:
        futures = {
            engine: pool.submit(run_sequence, engine, prepare_folder(root / engine, data), plan)
            for engine in ENGINES
        }
        return {engine: future.result() for engine, future in futures.items()}


def train_both(root: Path, data: Path, toolbox: str, config: str) -> dict[str, Path]:
    """Both engines' training runs of ``config`` alone (no resume, no test), side by side:
    per engine, the run folder of ``root/<engine>/work``."""

    def train(engine: str) -> Path:
        folder = prepare_folder(root / engine, data)
        tool = tools_dir(toolbox) / "train.py"
        run(engine_command(engine, tool, config, "--work-dir", "work"), folder).check()
        (run_dir,) = timestamp_dirs(folder / "work")
        return run_dir

    with ThreadPoolExecutor(max_workers=len(ENGINES)) as pool:
        futures = {engine: pool.submit(train, engine) for engine in ENGINES}
        return {engine: future.result() for engine, future in futures.items()}
