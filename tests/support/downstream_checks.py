"""The comparisons every toolbox's downstream test makes between treadle's and MMEngine's runs.

``runs`` is ``{engine: EngineRuns}`` (downstream_sequence.py). After the resume treadle is
compared with MMEngine's *uninterrupted* run: treadle's resumed run repeats it; MMEngine's
resume restarts the random streams, so its own resumed run is the wrong reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from downstream_runs import json_log, scalars

TOLERANCE = 1e-5


def _stage_dir(runs: Mapping, engine: str, stage: str) -> Path:
    reference = "train" if engine == "mmengine" and stage == "resume" else stage
    return getattr(runs[engine], f"{reference}_dir")


def by_step(records: list[dict], prefix: str | tuple[str, ...]) -> dict[int, dict[str, float]]:
    """``step -> {key: value}`` for the records holding keys that start with ``prefix``."""
    found: dict[int, dict[str, float]] = {}
    for record in records:
        values = {key: value for key, value in record.items() if key.startswith(prefix)}
        if values:
            found[record["step"]] = values
    return found


def assert_same_values(
    ours: dict[int, dict[str, float]], theirs: dict[int, dict[str, float]], what: str
) -> None:
    """Every step of ``ours`` has ``theirs``' keys with values within ``TOLERANCE``."""
    for step, values in ours.items():
        assert sorted(values) == sorted(theirs[step]), (what, step)
        for key, value in values.items():
            assert value == pytest.approx(theirs[step][key], abs=TOLERANCE), (what, step, key)


def assert_same_training(runs: Mapping, stage: str, steps: list[int]) -> None:
    """Every loss term of every iteration in ``steps`` equals MMEngine's."""
    losses = {engine: by_step(scalars(_stage_dir(runs, engine, stage)), "loss") for engine in runs}
    assert sorted(losses["treadle"]) == steps
    assert set(steps) <= set(losses["mmengine"])
    assert_same_values(losses["treadle"], losses["mmengine"], f"{stage} losses")


def assert_same_validation(
    runs: Mapping, stage: str, prefix: str | tuple[str, ...], steps: list[int]
) -> None:
    """Every metric named ``prefix...`` of every validation in ``steps`` equals MMEngine's."""
    metrics = {engine: by_step(scalars(_stage_dir(runs, engine, stage)), prefix) for engine in runs}
    assert sorted(metrics["treadle"]) == steps
    assert_same_values(metrics["treadle"], metrics["mmengine"], f"{stage} metrics")


def assert_resume_repeats(runs: Mapping, engine: str) -> None:
    """``engine``'s resumed run has the losses of its own uninterrupted run."""
    uninterrupted = by_step(scalars(runs[engine].train_dir), "loss")
    resumed = by_step(scalars(runs[engine].resume_dir), "loss")
    assert resumed
    assert_same_values(resumed, uninterrupted, f"{engine} resumed")


def metrics_of_test_run(
    runs: Mapping, prefix: str | tuple[str, ...]
) -> dict[str, list[dict[str, float]]]:
    """Per engine, the metrics tools/test.py logged (one record)."""
    return {
        engine: [
            {key: value for key, value in record.items() if key.startswith(prefix)}
            for record in json_log(done.test_dir)
        ]
        for engine, done in runs.items()
    }


def checkpoint_names(runs: Mapping, stage: str) -> dict[str, list[str]]:
    """Per engine, the files a work dir (``work`` or ``resumed``) holds."""
    return {
        engine: sorted(p.name for p in (done.folder / stage).iterdir() if p.is_file())
        for engine, done in runs.items()
    }
