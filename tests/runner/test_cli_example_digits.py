"""The parts of examples/digits (the README's main job), without a Runner."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sklearn_datasets = pytest.importorskip("sklearn.datasets")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits"


@pytest.fixture(scope="module")
def digits():
    sys.path.insert(0, str(EXAMPLE))
    try:
        import digits_example
    finally:
        sys.path.remove(str(EXAMPLE))
    return digits_example


def test_data_is_scikit_learns_digits(digits):
    images, labels = digits.load_digits()
    expected_images, expected_labels = sklearn_datasets.load_digits(return_X_y=True)
    assert np.array_equal(images, expected_images)
    assert np.array_equal(labels, expected_labels)


def test_splits_are_disjoint_and_cover_the_data(digits):
    train, val = digits.Digits("train"), digits.Digits("val")
    assert (len(train), len(val)) == (1438, 359)
    sample = train[0]
    assert sample["inputs"].shape == (64,) and sample["inputs"].max() <= 1.0
    rows = {tuple(x.tolist()) for x in train.inputs} & {tuple(x.tolist()) for x in val.inputs}
    assert len(rows) < 10  # only the few duplicate images of the data set itself


def test_unknown_split_is_named(digits):
    with pytest.raises(ValueError, match="split must be 'train' or 'val', got 'test'"):
        digits.Digits("test")


def test_model_modes(digits):
    model = digits.DigitsMLP(hidden=16)
    inputs, labels = torch.zeros(3, 64), torch.tensor([1, 2, 3])
    assert model(inputs, labels, mode="loss")["loss"].ndim == 0
    predictions = model(inputs, labels, mode="predict")
    assert len(predictions) == 3 and set(predictions[0]) == {"pred", "label"}
    assert model(inputs, mode="tensor").shape == (3, 10)


def test_metric_is_top1_percent(digits):
    metric = digits.DigitsAccuracy()
    samples = [{"pred": torch.tensor(p), "label": torch.tensor(t)} for p, t in [(1, 1), (2, 3)]]
    metric.process({}, samples)
    assert metric.compute_metrics(metric.results) == {"top1": 50.0}
    assert metric.prefix == "accuracy"
