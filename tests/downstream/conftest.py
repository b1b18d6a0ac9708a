"""Shared fixtures of the downstream suite: mmpretrain's generated images and both engines' runs.

Every run is a subprocess of a toolbox's unmodified tools (tests/support/downstream_runs.py and
downstream_sequence.py); the runs are made once per session and read by many small tests. Each
test module skips itself without its toolbox and mmengine (any environment but
``hatch run downstream:test``). The mmdetection and mmsegmentation modules make their own data
and runs (module fixtures), so that a run of one file makes only what it reads.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from downstream_images import make_image_folders
from downstream_runs import TESTED_CHECKPOINT
from downstream_sequence import EngineRuns, ToolboxRun, run_both


@pytest.fixture(scope="session")
def image_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The generated CustomDataset folders, shared by every run."""
    return make_image_folders(tmp_path_factory.mktemp("images"))


#: mmpretrain's sequence: train 4 epochs, resume from epoch 2 into a new work dir, test (drawing
#: the predictions on every test image).
MMPRETRAIN = ToolboxRun(
    toolbox="mmpretrain",
    config="tiny_cls.py",
    resume_from="work/epoch_2.pth",
    tested=TESTED_CHECKPOINT,
    # mmpretrain's VisualizationHook draws the predictions on every test image.
    test_args=(
        "--cfg-options",
        "default_hooks.visualization.enable=True",
        "default_hooks.visualization.interval=1",
    ),
)


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory, image_root: Path) -> dict[str, EngineRuns]:
    """Both engines' mmpretrain sequences."""
    return run_both(tmp_path_factory.mktemp("runs"), image_root, MMPRETRAIN)
