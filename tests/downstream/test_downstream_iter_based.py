"""mmpretrain trained by iteration (IterBasedTrainLoop, InfiniteSampler) on both engines.

Each engine trains configs/tiny_iter.py for 12 iterations, then a second work dir resumes from
the iteration-6 checkpoint. MMEngine replays the trained batches through the DataLoader
workers on resume; treadle skips them and hands the new workers the saved random streams: both
resumed runs repeat the uninterrupted one.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from downstream_runs import (
    ENGINES,
    engine_command,
    log_records,
    prepare_folder,
    run,
    scalars,
    skip_without_toolbox,
    timestamp_dirs,
    tools_dir,
    train_losses,
)

skip_without_toolbox()

TOLERANCE = 1e-5


def _sequence(engine: str, folder: Path) -> Path:
    train = tools_dir() / "train.py"
    run(engine_command(engine, train, "tiny_iter.py", "--work-dir", "work"), folder).check()
    run(
        engine_command(
            engine,
            train,
            "tiny_iter.py",
            "--work-dir",
            "resumed",
            "--resume",
            "work/iter_6.pth",
        ),
        folder,
    ).check()
    return folder


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory, image_root: Path) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("iter_based")
    with ThreadPoolExecutor(max_workers=len(ENGINES)) as pool:
        futures = {
            engine: pool.submit(_sequence, engine, prepare_folder(root / engine, image_root))
            for engine in ENGINES
        }
        return {engine: future.result() for engine, future in futures.items()}


def _records(folder: Path, stage: str) -> list[dict]:
    (run_dir,) = timestamp_dirs(folder / stage)
    return scalars(run_dir)


def test_both_engines_train_validate_and_resume_by_iteration(folders):
    for folder in folders.values():
        assert sorted(train_losses(_records(folder, "work"))) == list(range(1, 13))
        assert sorted(train_losses(_records(folder, "resumed"))) == list(range(7, 13))
        # Validated at iterations 6 and 12; both engines record those under step 0 (the epoch).
        validations = [r for r in _records(folder, "work") if "accuracy/top1" in r]
        assert [r["step"] for r in validations] == [0, 0]
        assert sorted(p.name for p in (folder / "work").glob("*.pth")) == [
            "iter_12.pth",
            "iter_6.pth",
        ]


def test_the_log_lines_have_the_same_shape(folders):
    """Same records apart from numbers: the iteration-based line format matches."""
    shapes = {}
    for engine, folder in folders.items():
        (run_dir,) = timestamp_dirs(folder / "work")
        shapes[engine] = [
            line.split("loss:")[0].split("accuracy/top1:")[0]
            for line in log_records(run_dir, folder)
            if "Iter(" in line
        ]
    assert shapes["treadle"] == shapes["mmengine"]


def test_loss_is_the_same_at_every_iteration(folders):
    losses = {engine: train_losses(_records(folder, "work")) for engine, folder in folders.items()}
    for step, loss in losses["mmengine"].items():
        assert losses["treadle"][step] == pytest.approx(loss, abs=TOLERANCE), step


@pytest.mark.parametrize("engine", ENGINES)
def test_resumed_run_repeats_the_uninterrupted_one(folders, engine):
    uninterrupted = train_losses(_records(folders[engine], "work"))
    resumed = train_losses(_records(folders[engine], "resumed"))
    for step, loss in resumed.items():
        assert loss == pytest.approx(uninterrupted[step], abs=TOLERANCE), step
