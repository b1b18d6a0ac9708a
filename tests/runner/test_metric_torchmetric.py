"""TorchMetric against the same torchmetrics metric computed directly on the whole data."""

from __future__ import annotations

import pytest
import torch

# torchmetrics is an extra: where it is not installed these tests skip (the ones that do not
# need it are in test_metric_torchmetric_optional.py).
torchmetrics = pytest.importorskip("torchmetrics")

from torchmetrics.classification import (  # noqa: E402
    MulticlassAccuracy,
    MulticlassConfusionMatrix,
)
from torchmetrics.regression import MeanSquaredError  # noqa: E402

from treadle.runner.evaluator import TorchMetric  # noqa: E402
from treadle.runner.registry import METRICS  # noqa: E402


@pytest.fixture
def labels():
    generator = torch.Generator().manual_seed(0)
    preds = torch.randint(0, 4, (23,), generator=generator)
    targets = torch.randint(0, 4, (23,), generator=generator)
    return preds, targets


def feed(metric, preds, targets, batch_size=5, pred_key="pred_label", target_key="gt_label"):
    for start in range(0, len(preds), batch_size):
        metric.process(
            None,
            [
                {pred_key: pred, target_key: target}
                for pred, target in zip(
                    preds[start : start + batch_size],
                    targets[start : start + batch_size],
                    strict=True,
                )
            ],
        )


def test_built_by_name_matches_torchmetrics_on_the_whole_data(labels):
    preds, targets = labels
    metric = METRICS.build(dict(type="TorchMetric", metric="MulticlassAccuracy", num_classes=4))
    feed(metric, preds, targets)
    expected = MulticlassAccuracy(num_classes=4)(preds, targets).item()
    assert metric.evaluate(len(preds)) == {
        "torchmetrics/MulticlassAccuracy": pytest.approx(expected)
    }
    assert metric.results == []


def test_padding_past_size_is_not_counted(labels):
    preds, targets = labels
    metric = TorchMetric("MulticlassAccuracy", num_classes=4, average="micro")
    # Two padded samples at the end, as a sampler with round_up adds: copies of the first two.
    feed(metric, torch.cat([preds, preds[:2]]), torch.cat([targets, targets[:2]]))
    expected = MulticlassAccuracy(num_classes=4, average="micro")(preds, targets).item()
    assert metric.evaluate(len(preds))["torchmetrics/MulticlassAccuracy"] == pytest.approx(expected)


def test_dotted_path_class_and_prefix():
    preds, targets = torch.linspace(0, 1, 9), torch.linspace(1, 0, 9)
    expected = MeanSquaredError()(preds, targets).item()
    for spec in ("torchmetrics.regression.MeanSquaredError", MeanSquaredError, "MeanSquaredError"):
        metric = TorchMetric(spec, pred_key="pred", target_key="gt", prefix="val")
        feed(metric, preds, targets, pred_key="pred", target_key="gt")
        assert metric.evaluate(9) == {"val/MeanSquaredError": pytest.approx(expected)}


def test_dotted_keys_reach_into_nested_samples(labels):
    preds, targets = labels
    scores = torch.nn.functional.one_hot(preds, 4).float()
    metric = TorchMetric(
        "MulticlassAccuracy", num_classes=4, pred_key="pred.scores", target_key="gt.label"
    )
    metric.process(
        None,
        [{"pred": {"scores": s}, "gt": {"label": t}} for s, t in zip(scores, targets, strict=True)],
    )
    expected = MulticlassAccuracy(num_classes=4)(scores, targets).item()
    assert metric.evaluate(len(preds))["torchmetrics/MulticlassAccuracy"] == pytest.approx(expected)


def test_non_scalar_results_become_lists(labels):
    preds, targets = labels
    metric = TorchMetric("MulticlassConfusionMatrix", num_classes=4)
    feed(metric, preds, targets)
    expected = MulticlassConfusionMatrix(num_classes=4)(preds, targets).tolist()
    assert metric.evaluate(len(preds)) == {"torchmetrics/MulticlassConfusionMatrix": expected}


def test_dict_results_keep_their_keys():
    collection = torchmetrics.MetricCollection  # a dict-returning metric: not a Metric, refused
    with pytest.raises(TypeError, match=r"is not a torchmetrics\.Metric subclass"):
        TorchMetric(collection)
    preds = torch.tensor([0.5, 1.0, 1.5, 3.0])
    targets = torch.tensor([0.0, 1.0, 2.0, 3.0])
    metric = TorchMetric(
        "MinMaxMetric", base_metric=MeanSquaredError(), pred_key="p", target_key="t"
    )
    feed(metric, preds, targets, batch_size=4, pred_key="p", target_key="t")
    result = metric.evaluate(4)
    assert set(result) == {"torchmetrics/raw", "torchmetrics/min", "torchmetrics/max"}
    assert result["torchmetrics/raw"] == pytest.approx(MeanSquaredError()(preds, targets).item())


def test_samples_of_different_shapes_are_updated_in_runs():
    metric = TorchMetric("MeanSquaredError", pred_key="p", target_key="t")
    first, second = torch.arange(6.0).reshape(2, 3), torch.arange(8.0).reshape(2, 4)
    metric.process(
        None, [{"p": first, "t": torch.zeros(2, 3)}, {"p": second, "t": torch.ones(2, 4)}]
    )
    expected = MeanSquaredError()
    expected.update(first, torch.zeros(2, 3))
    expected.update(second, torch.ones(2, 4))
    assert metric.evaluate(2)["torchmetrics/MeanSquaredError"] == pytest.approx(
        expected.compute().item()
    )


def test_stored_rows_own_their_memory():
    metric = TorchMetric("MeanSquaredError", pred_key="p", target_key="t")
    batch = torch.arange(1000.0).reshape(10, 100)
    metric.process(None, [{"p": row, "t": row} for row in batch])
    pred, target = metric.results[0]
    assert pred.untyped_storage().nbytes() == 100 * 4
    assert target.untyped_storage().nbytes() == 100 * 4


def test_python_numbers_are_accepted():
    metric = TorchMetric("MulticlassAccuracy", num_classes=3, average="micro")
    metric.process(None, [{"pred_label": 2, "gt_label": 2}, {"pred_label": 0, "gt_label": 1}])
    assert metric.evaluate(2) == {"torchmetrics/MulticlassAccuracy": 0.5}


def test_missing_key_names_the_argument_and_the_sample_keys():
    metric = TorchMetric("MulticlassAccuracy", num_classes=3)
    with pytest.raises(
        KeyError, match=r"pred_key='pred_label' is not in the data sample .*\['label', 'pred'\]"
    ):
        metric.process(None, [{"pred": 1, "label": 1}])


def test_unknown_name_lists_the_closest_names():
    message = (
        r"torchmetrics has no metric named 'MultiClassAcuracy'\. Did you mean MulticlassAccuracy"
    )
    with pytest.raises(ValueError, match=message):
        TorchMetric("MultiClassAcuracy")
    with pytest.raises(ValueError, match=message):
        METRICS.build(dict(type="TorchMetric", metric="MultiClassAcuracy"))


def test_bad_constructor_arguments_name_the_class():
    with pytest.raises(
        ValueError, match=r"TorchMetric could not build torchmetrics MulticlassAccuracy"
    ):
        TorchMetric("MulticlassAccuracy", num_classes=-1)


def test_dotted_path_errors_name_what_was_written():
    with pytest.raises(ImportError, match=r"metric='torchmetrics\.nowhere\.Acc': cannot import"):
        TorchMetric("torchmetrics.nowhere.Acc")
    with pytest.raises(AttributeError, match=r"torchmetrics\.classification has no 'Nope'"):
        TorchMetric("torchmetrics.classification.Nope")


def test_metric_must_be_a_name_or_a_class():
    with pytest.raises(
        TypeError, match=r"a torchmetrics class name, a dotted path or a class, got int: 3"
    ):
        TorchMetric(3)
