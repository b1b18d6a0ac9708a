"""Shared fixtures of the downstream suite: the generated images and the runs of both engines.

Every run is a subprocess of mmpretrain's unmodified tools (tests/support/downstream_runs.py);
the runs are made once per session and read by many small tests. Each test module skips
itself without mmpretrain and mmengine (any environment but ``hatch run downstream:test``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from downstream_images import make_image_folders
from downstream_runs import (
    ENGINES,
    TESTED_CHECKPOINT,
    Finished,
    engine_command,
    prepare_folder,
    run,
    timestamp_dirs,
    tools_dir,
)


@pytest.fixture(scope="session")
def image_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated CustomDataset folders, shared by every run."""
    return make_image_folders(tmp_path_factory.mktemp("images"))


@dataclass
class EngineRuns:
    """One engine's sequence: train 4 epochs, resume from epoch 2 into a new work dir, test
    (drawing the predictions on every test image)."""

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


def _sequence(engine: str, root: Path, images: Path) -> EngineRuns:
    folder = prepare_folder(root / engine, images)
    tools = tools_dir()
    train = run(
        engine_command(engine, tools / "train.py", "tiny_cls.py", "--work-dir", "work"), folder
    ).check()
    resume = run(
        engine_command(
            engine,
            tools / "train.py",
            "tiny_cls.py",
            "--work-dir",
            "resumed",
            "--resume",
            "work/epoch_2.pth",
        ),
        folder,
    ).check()
    test = run(
        engine_command(
            engine,
            tools / "test.py",
            "tiny_cls.py",
            TESTED_CHECKPOINT[engine],
            "--work-dir",
            "tested",
            # mmpretrain's VisualizationHook draws the predictions on every test image.
            "--cfg-options",
            "default_hooks.visualization.enable=True",
            "default_hooks.visualization.interval=1",
        ),
        folder,
    ).check()
    return EngineRuns(engine, folder, train, resume, test)


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory, image_root: Path) -> dict[str, EngineRuns]:
    """Both engines' sequences, run side by side (each is sequential and single-threaded)."""
    root = tmp_path_factory.mktemp("runs")
    with ThreadPoolExecutor(max_workers=len(ENGINES)) as pool:
        futures = {engine: pool.submit(_sequence, engine, root, image_root) for engine in ENGINES}
        return {engine: future.result() for engine, future in futures.items()}
