"""BaseMetric in one process: prefixes, results, dataset_meta and the errors a metric author
meets."""

from __future__ import annotations

import logging

import pytest
from runner_toys import captured_log

from treadle.logging import Logger
from treadle.runner.evaluator import BaseMetric


class Accuracy(BaseMetric):
    default_prefix = "acc"

    def process(self, data_batch, data_samples):
        self.results.extend(sample["pred"] == sample["gt"] for sample in data_samples)

    def compute_metrics(self, results):
        return {"top1": sum(results) / len(results), "count": len(results)}


class Unprefixed(Accuracy):
    default_prefix = None


class ReturnsFloat(Accuracy):
    def compute_metrics(self, results):
        return 0.5


class PerBatch(Accuracy):
    """Keeps one result per batch, as many MMEngine user metrics do."""

    def process(self, data_batch, data_samples):
        self.results.append(len(data_samples))

    def compute_metrics(self, results):
        return {"batches": len(results), "samples": sum(results)}


@pytest.fixture
def logged():
    """The messages logged through the current treadle Logger during the test."""
    with captured_log(Logger.get_current_instance()) as log:
        yield lambda: [(record.levelno, record.getMessage()) for record in log.records]


def samples(*pairs):
    return [{"pred": pred, "gt": gt} for pred, gt in pairs]


def test_evaluate_prefixes_keys_and_clears_results():
    metric = Accuracy()
    metric.process(None, samples((1, 1), (0, 1)))
    metric.process(None, samples((2, 2), (3, 3)))
    assert metric.evaluate(4) == {"acc/top1": 0.75, "acc/count": 4}
    assert metric.results == []


def test_prefix_argument_replaces_default_prefix_and_empty_means_default():
    metric = Accuracy(prefix="val")
    metric.process(None, samples((1, 1)))
    assert metric.evaluate(1) == {"val/top1": 1.0, "val/count": 1}
    assert Accuracy(prefix="").prefix == "acc"


def test_no_prefix_warns_once_and_returns_bare_keys(logged):
    metric = Unprefixed()
    warnings = [message for level, message in logged() if level == logging.WARNING]
    assert len(warnings) == 1 and "prefix is not set in metric class Unprefixed" in warnings[0]
    metric.process(None, samples((1, 0)))
    assert metric.evaluate(1) == {"top1": 0.0, "count": 1}


def test_size_drops_results_past_the_dataset_end():
    metric = Accuracy()
    # The last two are the padding a distributed sampler adds: copies of the first samples.
    metric.process(None, samples((1, 1), (0, 1), (0, 1), (1, 1), (0, 1)))
    assert metric.evaluate(3) == {"acc/top1": pytest.approx(1 / 3), "acc/count": 3}


def test_fewer_results_than_size_are_kept_as_mmengine_does():
    metric = PerBatch()
    metric.process(None, samples((1, 1), (0, 1)))
    metric.process(None, samples((1, 1)))
    assert metric.evaluate(3) == {"acc/batches": 2, "acc/samples": 3}


def test_evaluate_without_results_warns_with_the_class_name(logged):
    metric = PerBatch()
    assert metric.evaluate(10) == {"acc/batches": 0, "acc/samples": 0}
    warnings = [message for level, message in logged() if level == logging.WARNING]
    assert any("PerBatch got no results to evaluate" in message for message in warnings)


def test_compute_metrics_returning_no_dict_is_a_type_error_naming_class_and_type():
    metric = ReturnsFloat()
    metric.process(None, samples((1, 1)))
    with pytest.raises(TypeError, match=r"ReturnsFloat\.compute_metrics must return a dict.*float"):
        metric.evaluate(1)
    assert metric.results == []  # the next evaluation starts afresh


def test_dataset_meta_is_a_copy():
    meta = {"classes": ["cat", "dog"]}
    metric = Accuracy()
    assert metric.dataset_meta is None
    metric.dataset_meta = meta
    metric.dataset_meta["classes"].append("bird")
    assert meta == {"classes": ["cat", "dog"]}


def test_collect_arguments_are_kept():
    metric = Accuracy(collect_device="gpu")
    assert (metric.collect_device, metric.collect_dir) == ("gpu", None)
    assert Accuracy(collect_dir="/shared/tmp").collect_dir == "/shared/tmp"


def test_unknown_collect_device_is_refused_at_construction():
    with pytest.raises(
        ValueError, match=r"Accuracy: collect_device must be one of 'cpu', 'gpu', got 'tpu'"
    ):
        Accuracy(collect_device="tpu")


def test_collect_dir_needs_cpu_collection():
    with pytest.raises(ValueError, match=r"collect_dir='/shared' needs collect_device='cpu'"):
        Accuracy(collect_device="gpu", collect_dir="/shared")


def test_base_metric_is_abstract():
    with pytest.raises(TypeError, match="abstract"):
        BaseMetric()
