"""mmdetection 3.3.0 trains, validates, checkpoints, resumes and tests on treadle, unchanged.

configs/tiny_det.py (a tiny RetinaNet, mmcv's compiled NMS at test time) runs through
mmdetection's own tools/train.py and tools/test.py with MMEngine 0.10.7 and with treadle
(``python -m treadle.compat``), on a generated COCO set: 3 epochs of 4 iterations, a second
work dir resumed from the epoch-1 checkpoint, tools/test.py on the last checkpoint. treadle
must give every loss term of every iteration, every COCO metric of every validation and the
test's metrics as MMEngine does, and its resumed run must repeat the uninterrupted one.
"""

from __future__ import annotations

import pytest
from downstream_checks import (
    assert_resume_repeats,
    assert_same_training,
    assert_same_validation,
    checkpoint_names,
    metrics_of_test_run,
)
from downstream_dense_data import make_coco_set
from downstream_runs import skip_without_toolbox
from downstream_sequence import EngineRuns, ToolboxRun, run_both

skip_without_toolbox("mmdet", compiled_mmcv=True)

#: 8 training images, batch size 2.
ITERS_PER_EPOCH = 4
EPOCHS = 3
PLAN = ToolboxRun(
    toolbox="mmdet",
    config="tiny_det.py",
    resume_from="work/epoch_1.pth",
    # treadle's resumed run repeats the uninterrupted one (tested below); MMEngine's does not.
    tested={"treadle": "resumed/epoch_3.pth", "mmengine": "work/epoch_3.pth"},
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EngineRuns]:
    data = make_coco_set(tmp_path_factory.mktemp("coco"))
    return run_both(tmp_path_factory.mktemp("mmdet"), data, PLAN)


@pytest.mark.parametrize(("stage", "first_epoch"), [("train", 1), ("resume", 2)])
def test_losses_are_the_same_at_every_iteration(runs, stage, first_epoch):
    first = (first_epoch - 1) * ITERS_PER_EPOCH + 1
    assert_same_training(runs, stage, list(range(first, EPOCHS * ITERS_PER_EPOCH + 1)))


@pytest.mark.parametrize(("stage", "first_epoch"), [("train", 1), ("resume", 2)])
def test_coco_metrics_are_the_same_every_epoch(runs, stage, first_epoch):
    assert_same_validation(runs, stage, "coco/", list(range(first_epoch, EPOCHS + 1)))


def test_resumed_run_repeats_the_uninterrupted_one(runs):
    assert_resume_repeats(runs, "treadle")


def test_tools_test_gives_the_same_metrics(runs):
    metrics = metrics_of_test_run(runs, "coco/")
    assert len(metrics["treadle"]) == 1
    assert "coco/bbox_mAP" in metrics["treadle"][0]
    assert metrics["treadle"][0] == pytest.approx(metrics["mmengine"][0], abs=1e-5)
    for engine, done in runs.items():
        assert f"Load checkpoint from {PLAN.tested[engine]}" in done.test.output


def test_checkpoints_are_kept_as_mmengine_keeps_them(runs):
    for stage in ("work", "resumed"):
        names = checkpoint_names(runs, stage)
        assert names["treadle"] == names["mmengine"]
    assert "epoch_3.pth" in names["treadle"]
