"""mmsegmentation 1.2.2 trains, validates, checkpoints, resumes and tests on treadle, unchanged.

configs/tiny_seg.py (a tiny FCN, trained by iteration as mmsegmentation's schedules are) runs
through mmsegmentation's own tools/train.py and tools/test.py with MMEngine 0.10.7 and with
treadle (``python -m treadle.compat``), on a generated set in mmsegmentation's folder layout:
36 iterations with validation and a checkpoint every 12, a second work dir resumed from
iteration 12, tools/test.py on the last checkpoint. treadle must give every loss of every
iteration, IoUMetric's numbers at every validation and in the test as MMEngine does, and its
resumed run must repeat the uninterrupted one.
"""

from __future__ import annotations

import pytest
from downstream_checks import (
    assert_resume_repeats,
    assert_same_training,
    assert_same_validation,
    assert_same_values,
    by_step,
    checkpoint_names,
    metrics_of_test_run,
)
from downstream_dense_data import make_segmentation_set
from downstream_runs import scalars, skip_without_toolbox
from downstream_sequence import EngineRuns, ToolboxRun, run_both, train_both

skip_without_toolbox("mmseg", compiled_mmcv=True)

MAX_ITERS = 36
INTERVAL = 12
#: What IoUMetric logs (mIoU asked for: aAcc, mIoU and mAcc).
METRICS = ("aAcc", "mIoU", "mAcc")
PLAN = ToolboxRun(
    toolbox="mmseg",
    config="tiny_seg.py",
    resume_from=f"work/iter_{INTERVAL}.pth",
    resume_by_load_from=True,
    # treadle's resumed run repeats the uninterrupted one (tested below); MMEngine's does not.
    tested={"treadle": f"resumed/iter_{MAX_ITERS}.pth", "mmengine": f"work/iter_{MAX_ITERS}.pth"},
)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, EngineRuns]:
    data = make_segmentation_set(tmp_path_factory.mktemp("segmentation"))
    return run_both(tmp_path_factory.mktemp("mmseg"), data, PLAN)


@pytest.mark.parametrize(("stage", "first"), [("train", 1), ("resume", INTERVAL + 1)])
def test_losses_are_the_same_at_every_iteration(runs, stage, first):
    assert_same_training(runs, stage, list(range(first, MAX_ITERS + 1)))


@pytest.mark.parametrize(("stage", "first"), [("train", INTERVAL), ("resume", 2 * INTERVAL)])
def test_iou_metrics_are_the_same_at_every_validation(runs, stage, first):
    assert_same_validation(runs, stage, METRICS, list(range(first, MAX_ITERS + 1, INTERVAL)))


def test_resumed_run_repeats_the_uninterrupted_one(runs):
    assert_resume_repeats(runs, "treadle")


def test_tools_test_gives_the_same_metrics(runs):
    metrics = metrics_of_test_run(runs, METRICS)
    assert len(metrics["treadle"]) == 1
    assert sorted(metrics["treadle"][0]) == sorted(METRICS)
    assert metrics["treadle"][0] == pytest.approx(metrics["mmengine"][0], abs=1e-5)
    for engine, done in runs.items():
        assert f"Load checkpoint from {PLAN.tested[engine]}" in done.test.output


def test_checkpoints_are_kept_as_mmengine_keeps_them(runs):
    for stage in ("work", "resumed"):
        names = checkpoint_names(runs, stage)
        assert names["treadle"] == names["mmengine"]
    assert f"iter_{MAX_ITERS}.pth" in names["treadle"]


@pytest.fixture(scope="module")
def dropout_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Per engine, ``step -> losses`` of configs/tiny_seg_dropout.py (validation after 8)."""
    data = make_segmentation_set(tmp_path_factory.mktemp("segmentation"))
    run_dirs = train_both(tmp_path_factory.mktemp("dropout"), data, "mmseg", "tiny_seg_dropout.py")
    return {engine: by_step(scalars(run_dir), "loss") for engine, run_dir in run_dirs.items()}


def test_with_dropout_losses_are_the_same_until_the_first_validation(dropout_runs):
    before = {step: dropout_runs["treadle"][step] for step in range(1, 9)}
    assert_same_values(before, dropout_runs["mmengine"], "before validation")


@pytest.mark.xfail(
    strict=True,
    reason="treadle's validation draws nothing from training's random generators (so a resumed "
    "run stays exact); MMEngine's val DataLoader draws its base seed from torch's, which moves "
    "every dropout mask after it (runner README, Differences from MMEngine)",
)
def test_with_dropout_losses_are_the_same_after_a_validation(dropout_runs):
    after = {step: dropout_runs["treadle"][step] for step in range(9, 17)}
    assert_same_values(after, dropout_runs["mmengine"], "after validation")
