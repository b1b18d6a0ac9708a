"""Evaluator in one process: building metrics, feeding them, merging what they return."""

from __future__ import annotations

import pickle

import pytest

from treadle.runner.evaluator import BaseMetric, DumpResults, Evaluator, get_metric_value
from treadle.runner.registry import EVALUATOR, METRICS


@METRICS.register_module(force=True)
class CountingMetric(BaseMetric):
    """Counts samples and remembers what it was given, to check what the Evaluator passes."""

    default_prefix = "count"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.batches = []

    def process(self, data_batch, data_samples):
        self.batches.append((data_batch, list(data_samples)))
        self.results.extend(data_samples)

    def compute_metrics(self, results):
        return {
            "samples": len(results),
            "classes": len((self.dataset_meta or {}).get("classes", [])),
        }


class Accuracy(BaseMetric):
    default_prefix = "acc"

    def process(self, data_batch, data_samples):
        self.results.extend(sample["pred"] == sample["gt"] for sample in data_samples)

    def compute_metrics(self, results):
        return {"top1": sum(results) / len(results)}


def test_one_metric_a_config_or_a_list():
    assert [type(m) for m in Evaluator(Accuracy()).metrics] == [Accuracy]
    assert [type(m) for m in Evaluator(dict(type="CountingMetric")).metrics] == [CountingMetric]
    evaluator = Evaluator([Accuracy(), dict(type="CountingMetric", prefix="n")])
    assert [type(m) for m in evaluator.metrics] == [Accuracy, CountingMetric]
    assert evaluator.metrics[1].prefix == "n"


def test_registered_in_evaluator_registry():
    evaluator = EVALUATOR.build(dict(type="Evaluator", metrics=dict(type="CountingMetric")))
    assert isinstance(evaluator, Evaluator)


def test_unknown_metric_type_names_the_registry_and_the_type():
    with pytest.raises(KeyError, match=r"CountingMetrc.*metric.*CountingMetric"):
        Evaluator(dict(type="CountingMetrc"))


def test_a_metric_that_is_neither_metric_nor_config_is_refused():
    with pytest.raises(TypeError, match=r"Evaluator takes metrics .* got str: 'Accuracy'"):
        Evaluator(["Accuracy"])


def test_process_and_evaluate_merge_every_metric():
    evaluator = Evaluator([Accuracy(), dict(type="CountingMetric")])
    evaluator.process([{"pred": 1, "gt": 1}, {"pred": 0, "gt": 1}], data_batch={"inputs": [7, 8]})
    evaluator.process([{"pred": 3, "gt": 3}], data_batch={"inputs": [9]})
    assert evaluator.evaluate(3) == {
        "acc/top1": pytest.approx(2 / 3),
        "count/samples": 3,
        "count/classes": 0,
    }
    batches = evaluator.metrics[1].batches
    assert [batch for batch, _ in batches] == [{"inputs": [7, 8]}, {"inputs": [9]}]


def test_data_elements_reach_metrics_as_dicts():
    from treadle.runner.structures import BaseDataElement

    evaluator = Evaluator(dict(type="CountingMetric"))
    element = BaseDataElement(metainfo={"img_id": 3}, pred_label=2)
    evaluator.process([element, {"pred_label": 1}])
    ((_, seen),) = evaluator.metrics[0].batches
    assert seen == [{"img_id": 3, "pred_label": 2}, {"pred_label": 1}]


def test_dataset_meta_reaches_every_metric():
    evaluator = Evaluator([dict(type="CountingMetric"), dict(type="CountingMetric", prefix="b")])
    evaluator.dataset_meta = {"classes": ["cat", "dog"]}
    assert evaluator.dataset_meta == {"classes": ["cat", "dog"]}
    evaluator.process([{}])
    assert evaluator.evaluate(1) == {
        "count/samples": 1,
        "count/classes": 2,
        "b/samples": 1,
        "b/classes": 2,
    }


def test_duplicate_metric_names_name_the_key_and_both_metrics():
    evaluator = Evaluator([dict(type="CountingMetric"), dict(type="CountingMetric")])
    evaluator.process([{}])
    with pytest.raises(
        ValueError,
        match=r"^There are multiple evaluation results with the same metric name "
        r"'count/samples', from CountingMetric and CountingMetric; give them different prefixes",
    ):
        evaluator.evaluate(1)


def test_no_metrics_evaluate_to_an_empty_dict():
    assert Evaluator([]).evaluate(5) == {}


def test_offline_evaluate_in_chunks():
    evaluator = Evaluator([Accuracy(), dict(type="CountingMetric")])
    predictions = [{"pred": index % 2, "gt": 1} for index in range(5)]
    data = [{"inputs": index} for index in range(5)]
    result = evaluator.offline_evaluate(predictions, data, chunk_size=2)
    assert result == {"acc/top1": 0.4, "count/samples": 5, "count/classes": 0}
    batches = evaluator.metrics[1].batches
    assert [len(samples) for _, samples in batches] == [2, 2, 1]
    assert [batch for batch, _ in batches] == [data[0:2], data[2:4], data[4:5]]


def test_offline_evaluate_without_data_passes_none():
    evaluator = Evaluator(dict(type="CountingMetric"))
    assert evaluator.offline_evaluate([{}, {}, {}])["count/samples"] == 3
    assert [batch for batch, _ in evaluator.metrics[0].batches] == [None, None, None]


def test_offline_evaluate_lengths_must_agree():
    with pytest.raises(ValueError, match="got 2 data_samples and 1 data"):
        Evaluator(Accuracy()).offline_evaluate([{}, {}], [{}])
    # MMEngine asserts there: the error is an AssertionError too, with its phrase.
    with pytest.raises(
        AssertionError, match=r"^data_samples and data should have the same length: offline_"
    ):
        Evaluator(Accuracy()).offline_evaluate([{}, {}], [{}])


def test_offline_evaluate_chunk_size_must_be_positive():
    with pytest.raises(ValueError, match="chunk_size must be at least 1, got 0"):
        Evaluator(Accuracy()).offline_evaluate([{}], chunk_size=0)


def test_dump_results_writes_every_prediction_in_order(tmp_path):
    import torch

    path = tmp_path / "preds.pkl"
    evaluator = Evaluator(dict(type="DumpResults", out_file_path=str(path)))
    predictions = [{"pred": torch.tensor([index, index + 1]), "id": index} for index in range(3)]
    assert evaluator.offline_evaluate(predictions, chunk_size=2) == {}
    dumped = pickle.loads(path.read_bytes())
    assert [item["id"] for item in dumped] == [0, 1, 2]
    assert all(torch.equal(item["pred"], torch.tensor([i, i + 1])) for i, item in enumerate(dumped))
    # Written under a temporary name then renamed: nothing else is left in the directory.
    assert [p.name for p in tmp_path.iterdir()] == ["preds.pkl"]


def test_dump_results_accepts_pickle_suffix(tmp_path):
    metric = DumpResults(out_file_path=str(tmp_path / "preds.pickle"))
    metric.process(None, [{"a": 1}])
    metric.evaluate(1)
    assert pickle.loads((tmp_path / "preds.pickle").read_bytes()) == [{"a": 1}]


def test_dump_results_refuses_other_suffixes():
    with pytest.raises(
        ValueError,
        match=r"^The output file must be a pkl file\. DumpResults writes a pickle file: "
        r"out_file_path must end in \.pkl or \.pickle, got 'work_dirs/preds\.json'",
    ):
        DumpResults(out_file_path="work_dirs/preds.json")


METRICS_DICT = {"accuracy/top1": 0.9, "accuracy/top5": 1.0, "coco/bbox/mAP": 0.4, "loss": 2.0}


@pytest.mark.parametrize(
    ("indicator", "expected"),
    [("accuracy/top1", 0.9), ("top1", 0.9), ("mAP", 0.4), ("coco/bbox/mAP", 0.4), ("loss", 2.0)],
)
def test_get_metric_value(indicator, expected):
    assert get_metric_value(indicator, METRICS_DICT) == expected


def test_get_metric_value_unknown_full_name_lists_the_metrics():
    with pytest.raises(
        ValueError, match=r"'val/top1' can not match any metric: the metrics are \['accuracy/top1'"
    ):
        get_metric_value("val/top1", METRICS_DICT)


def test_get_metric_value_unknown_bare_name_lists_the_metrics():
    with pytest.raises(ValueError, match=r"'top3' can not match any metric: the metrics are"):
        get_metric_value("top3", METRICS_DICT)


def test_get_metric_value_ambiguous_bare_name_lists_the_candidates():
    with pytest.raises(
        ValueError, match=r"'top1' matches multiple metrics \(\['a/top1', 'b/top1'\]\)"
    ):
        get_metric_value("top1", {"a/top1": 1, "b/top1": 2})
