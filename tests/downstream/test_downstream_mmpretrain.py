"""mmpretrain 1.2.0 trains, validates, checkpoints, resumes and tests on treadle, unchanged.

The same config (configs/tiny_cls.py) runs through mmpretrain's own tools/train.py and
tools/test.py twice: with MMEngine 0.10.7 (``python tools/train.py``) and with treadle
(``python -m treadle.compat tools/train.py``). Each engine trains 4 epochs, resumes a second
work dir from the epoch-2 checkpoint, and tests the final checkpoint (conftest.py). treadle must
give the same loss at every iteration, the same validation and test accuracy, the same
scalars.json keys and the same log lines apart from timings.
"""

from __future__ import annotations

import numpy as np
import pytest
from downstream_runs import (
    TIMING_KEYS,
    hook_table,
    json_log,
    log_records,
    mmengine_keys,
    scalars,
    skip_without_toolbox,
    train_losses,
    val_metrics,
)
from PIL import Image

skip_without_toolbox()

#: Iterations per epoch: 24 training images, batch size 4.
ITERS_PER_EPOCH = 6
TOLERANCE = 1e-5

#: Log records only one engine writes, each with its reason (the README's differences).
ONLY_MMENGINE = {
    # MMEngine's CheckpointHook builds a deprecated FileClient in before_train and warns about
    # itself; treadle's has no FileClient.
    'WARNING - "FileClient" will be deprecated in future. Please use io functions in '
    "https://mmengine.readthedocs.io/en/latest/api/fileio.html#file-io",
    'WARNING - "HardDiskBackend" is the alias of "LocalBackend" and the former will be '
    "deprecated in future.",
}
ONLY_TREADLE_PREFIXES = (
    # MMEngine writes the initialisation table straight into the log file's stream, without a
    # record header; treadle logs it as one INFO record (same text below it).
    "INFO - Name of parameter - Initialization information",
    # treadle's resume names the backend and path it loads from, as load_checkpoint does in
    # both engines.
    "INFO - Loads checkpoint by local backend from path: ",
    # `--resume PATH`: treadle looks for a newer checkpoint in work_dir first (a restarted
    # command continues where it stopped) and says it found none; MMEngine resumes PATH as is.
    "INFO - Did not find last_checkpoint to be resumed.",
)


def _comparable(records: list[str], engine: str) -> list[str]:
    if engine == "mmengine":
        return [record for record in records if record not in ONLY_MMENGINE]
    return [record for record in records if not record.startswith(ONLY_TREADLE_PREFIXES)]


@pytest.mark.parametrize("stage", ["train", "resume"])
def test_loss_is_the_same_at_every_iteration(runs, stage):
    losses = {
        engine: train_losses(scalars(getattr(done, f"{stage}_dir")))
        for engine, done in runs.items()
    }
    first = 1 if stage == "train" else 2 * ITERS_PER_EPOCH + 1
    expected_steps = list(range(first, 4 * ITERS_PER_EPOCH + 1))
    assert sorted(losses["mmengine"]) == expected_steps
    assert sorted(losses["treadle"]) == expected_steps
    for step in expected_steps:
        assert losses["treadle"][step] == pytest.approx(losses["mmengine"][step], abs=TOLERANCE), (
            f"{stage} iteration {step}"
        )


@pytest.mark.parametrize("stage", ["train", "resume"])
def test_validation_accuracy_is_the_same_every_epoch(runs, stage):
    accuracy = {
        engine: val_metrics(scalars(getattr(done, f"{stage}_dir"))) for engine, done in runs.items()
    }
    epochs = [1, 2, 3, 4] if stage == "train" else [3, 4]
    assert sorted(accuracy["mmengine"]) == epochs
    assert accuracy["treadle"] == accuracy["mmengine"]


def test_resume_continues_the_schedule(runs):
    """The resumed run starts at epoch 3 with the restored scheduler (lr drops at epoch 4)."""
    for done in runs.values():
        records = [r for r in scalars(done.resume_dir) if "lr" in r]
        assert records[0]["epoch"] == 3
        assert records[0]["iter"] == 2 * ITERS_PER_EPOCH + 1
        assert [r["lr"] for r in records if r["epoch"] == 4] == [pytest.approx(0.0025)] * 6


@pytest.mark.parametrize("stage", ["train", "resume"])
def test_scalars_json_has_the_same_records(runs, stage):
    """Same records in the same order with the same keys; equal values apart from timings."""
    records = {
        engine: [mmengine_keys(r) for r in scalars(getattr(done, f"{stage}_dir"))]
        for engine, done in runs.items()
    }
    _same_records(records, stage)


@pytest.mark.parametrize("stage", ["train", "resume", "test"])
def test_json_log_has_the_same_records(runs, stage):
    records = {
        engine: [mmengine_keys(r) for r in json_log(getattr(done, f"{stage}_dir"))]
        for engine, done in runs.items()
    }
    _same_records(records, stage)


def _same_records(records: dict[str, list[dict]], stage: str) -> None:
    assert [sorted(r) for r in records["treadle"]] == [sorted(r) for r in records["mmengine"]]
    for theirs, ours in zip(records["mmengine"], records["treadle"], strict=True):
        for key, value in theirs.items():
            if key in TIMING_KEYS:
                continue
            assert ours[key] == pytest.approx(value, abs=TOLERANCE), (stage, key, theirs)


@pytest.mark.parametrize("stage", ["train", "resume", "test"])
def test_log_lines_are_the_same_apart_from_timings(runs, stage):
    records = {
        engine: _comparable(log_records(getattr(done, f"{stage}_dir"), done.folder), engine)
        for engine, done in runs.items()
    }
    assert records["treadle"] == records["mmengine"]


def test_the_log_names_the_checkpoint_it_resumes_from(runs):
    for done in runs.values():
        records = log_records(done.resume_dir, done.folder)
        assert "INFO - resumed epoch: 2, iter: 12" in records


def test_hook_order_table_is_the_same(runs):
    tables = {engine: hook_table(done.train_dir) for engine, done in runs.items()}
    assert _without_checkpoint_before_val(tables["treadle"]) == tables["mmengine"]


def _without_checkpoint_before_val(table: list[str]) -> list[str]:
    # A treadle CheckpointHook that acts before validation (keeping training's random
    # generators for a best checkpoint written after it) adds this one row; MMEngine's does not.
    if "before_val:" not in table:
        return table
    start = table.index("before_val:")
    end = table.index(" --------------------", start)
    rows = [row for row in table[start:end] if row.endswith(") CheckpointHook")]
    return [row for index, row in enumerate(table) if not (start < index < end and row in rows)]


def test_tools_test_gives_the_same_accuracy(runs):
    accuracy = {
        engine: [r["accuracy/top1"] for r in json_log(done.test_dir)]
        for engine, done in runs.items()
    }
    assert accuracy["treadle"] == accuracy["mmengine"]
    assert len(accuracy["treadle"]) == 1
    for done in runs.values():
        assert "Load checkpoint from resumed/epoch_4.pth" in done.test.output


def test_checkpoints_are_kept_as_mmengine_keeps_them(runs):
    """max_keep_ckpts=3: the same files in both work dirs, last_checkpoint naming the last."""
    for stage in ("work", "resumed"):
        names = {
            engine: sorted(p.name for p in (done.folder / stage).iterdir() if p.is_file())
            for engine, done in runs.items()
        }
        assert names["treadle"] == names["mmengine"]
    for done in runs.values():
        last = (done.folder / "resumed" / "last_checkpoint").read_text().strip()
        assert last == str(done.folder / "resumed" / "epoch_4.pth")


def test_visualization_hook_draws_the_same_images(runs):
    """mmpretrain's UniversalVisualizer draws on ``ax_save`` directly: same pixels."""
    images = {
        engine: {p.name: p for p in (done.test_dir / "vis_data" / "vis_image").glob("*.png")}
        for engine, done in runs.items()
    }
    assert len(images["mmengine"]) == 12
    assert sorted(images["treadle"]) == sorted(images["mmengine"])
    for name, theirs in images["mmengine"].items():
        expected = np.asarray(Image.open(theirs))
        drawn = np.asarray(Image.open(images["treadle"][name]))
        assert np.array_equal(drawn, expected), name
